// ZeromeshClient: a NestJS ClientProxy over a zeromesh Client, for
// ClientsModule.register([{ name, customClass: ZeromeshClient, options: { seeds } }]).
// - send(pattern, data) calls the method of the pattern's name (a string as it is, an object
//   pattern as Nest names it): a stream when the peers say it streams (PROTOCOL.md 4.8.2), each
//   item a value of the Observable; else a request whose every result (a handler's Observable
//   values, PROTOCOL.md 4.2.3) is a value of the Observable, in order.
// - Nest's fast failures: no peer up within connectTimeout fails with code ECONNREFUSED (the
//   zeromesh error its cause); live peers none of which serves the pattern fail at once with
//   Nest's "There is no matching message handler" (unless the record asks to wait for a peer).
//   The first call's deadline is one deadline, its wait for the peers included.
// - emit(pattern, data) publishes the event to every subscribing group (a server instance is a
//   group of its own unless its `group` option names one): the Observable gives { delivered }
//   once each group's handler finished, or the error of a group that failed. With the record
//   option `broadcast: true`, every subscribing instance runs it, grouped or not.
// - Nest 12's packet metadata (setOnDispatchHook) travels as the request header
//   `nest-metadata`, JSON; the handler reads it with ctx.getMetadata().
// - A contract's method (contract.methods.x) or event (contract.events.y) as the pattern: the
//   input or payload is checked before it is sent, and send() is typed by it.
// - ZeromeshRecord(data, options) as the data gives that call its options (headers, timeout,
//   key, idempotent, waitForPeer, all; for emit, groups, ack and broadcast). `all: true`: the
//   call goes to every server that serves the pattern, each one's values as they come.
// - close() (Nest calls it at application shutdown) lets the calls in flight finish, within
//   drainTimeout, before it closes the client; calls made meanwhile still go out.
import { ClientProxy } from '@nestjs/microservices'
import { Client } from '../client/index.js'
import { check } from '../runtime/contract.js'
import { METADATA_HEADER } from './context.js'
import { invalidArgument, NoPeersError, UnknownMethodError } from '../protocol/errors.js'

/** How long the first call waits for a peer to answer before it fails ECONNREFUSED (connectTimeout's default). */
export const CONNECT_TIMEOUT_MS = 1000
/** Nest's own words for a pattern no server handles (@nestjs/microservices NO_MESSAGE_HANDLER). */
export const NO_MESSAGE_HANDLER = 'There is no matching message handler defined in the remote service.'

/** Data with the options of its call: client.send('x', new ZeromeshRecord(data, { headers, timeout })). */
export class ZeromeshRecord {
  constructor (data, options = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgument('new ZeromeshRecord(data, options): options must be an object of call options (timeout, headers, key, idempotent, waitForPeer; for emit, groups, ack and broadcast)')
    this.data = data
    this.options = options
  }
}

export class ZeromeshClient extends ClientProxy {
  /**
   * @param {object} [options]  a zeromesh Client's options (seeds, timeout, security, ...), and:
   * @param {number} [options.drainTimeout]  how long close() waits for the calls in flight (default: the client's timeout)
   * @param {number} [options.connectTimeout]  how long a call waits for a first peer to answer before it fails ECONNREFUSED (default 1000 ms, and never past the call's timeout)
   * @param {boolean} [options.all]  every send() goes to every server that serves the pattern, as Nest's broker transports deliver it (default false: one server; a record's `all` overrides it)
   */
  constructor (options = {}) {
    super()
    if (options === null || typeof options !== 'object') throw invalidArgument('new ZeromeshClient(options): options must be an object of Client options, such as { seeds: [...] }')
    const { drainTimeout, connectTimeout, all = false, ...clientOptions } = options
    if (typeof all !== 'boolean') throw invalidArgument(`new ZeromeshClient(options): all must be true or false, got ${JSON.stringify(all)}`)
    if (drainTimeout !== undefined && !(Number.isInteger(drainTimeout) && drainTimeout >= 0)) throw invalidArgument(`new ZeromeshClient(options): drainTimeout must be a whole number of milliseconds, got ${JSON.stringify(drainTimeout)}`)
    if (connectTimeout !== undefined && !(Number.isInteger(connectTimeout) && connectTimeout >= 1 && connectTimeout <= 2 ** 31 - 1)) throw invalidArgument(`new ZeromeshClient(options): connectTimeout must be a whole number of milliseconds from 1, got ${JSON.stringify(connectTimeout)}`)
    // Checked now, as the zeromesh Client will check them: a missing seed or a bad option fails
    // where the module is declared, not at the first call.
    try {
      Client.checkOptions(clientOptions)
    } catch (err) {
      throw invalidArgument(`new ZeromeshClient(options): ${err.message.replace(/^zeromesh: /, '')}`)
    }
    this.clientOptions = clientOptions
    this.drainTimeout = drainTimeout ?? null
    this.connectTimeout = connectTimeout ?? CONNECT_TIMEOUT_MS
    this.all = all
    this.client = null
    this.inflight = 0
    this.idle = null // resolves when inflight reaches 0 (close() waits on it)
    this.closing = null
    this.listeners = []
  }

  /** Makes the zeromesh Client (once); it connects to its seeds in the background. */
  connect () {
    try {
      return Promise.resolve(this.ensure())
    } catch (err) {
      return Promise.reject(err)
    }
  }

  ensure () {
    if (this.client === null) {
      this.client = new Client(this.clientOptions)
      for (const [event, callback] of this.listeners) this.client.on(event, callback)
      this._status$.next('connected')
    }
    return this.client
  }

  /** Lets the calls in flight finish (within drainTimeout, on the client's clock), then closes the client. */
  close () {
    if (this.closing !== null) return this.closing
    const client = this.client
    if (client === null) return Promise.resolve()
    this.closing = (async () => {
      const limit = this.drainTimeout ?? client.deadline().timeout
      if (limit > 0 && this.inflight > 0) await client.deadline(limit).within(this.whenIdle())
      this.client = null
      await client.close() // what is left past drainTimeout fails ClosedError
      this._status$.next('disconnected')
    })().finally(() => { this.closing = null })
    return this.closing
  }

  /** Listens to the client's events ('peer', 'error'); before connect() too. */
  on (event, callback) {
    this.listeners.push([event, callback])
    this.client?.on(event, callback)
  }

  /** The zeromesh Client. */
  unwrap () {
    return this.ensure()
  }

  /**
   * send(): a stream when the peers serve the method as one, else a request whose every
   * result is a value; one deadline (the record's timeout, or the client's) from the call on.
   */
  publish (packet, callback) {
    const abort = new AbortController()
    this.track((async () => {
      try {
        const client = this.ensure()
        // The record's timeout, checked by the client's own rule before any time is counted
        // against it (0: a stream's "none"; a request refuses it where it is sent).
        const record = packet.data instanceof ZeromeshRecord ? packet.data.options : undefined
        const deadline = client.deadline(record?.timeout === 0 ? undefined : record?.timeout)
        const { method, data, options } = await callOf(packet.pattern, packet.data, this.normalizePattern.bind(this))
        const { waitForPeer = false, all = this.all, ...rest } = options ?? {}
        if (typeof waitForPeer !== 'boolean') throw invalidArgument('ZeromeshRecord: waitForPeer must be true or false')
        if (typeof all !== 'boolean') throw invalidArgument('ZeromeshRecord: all must be true or false')
        const o = { ...rest, headers: withMetadata(rest.headers, packet.metadata), signal: rest.signal === undefined ? abort.signal : AbortSignal.any([rest.signal, abort.signal]) }
        if (all) return await this.fromEvery(client, method, data, o, deadline, callback)
        const streams = await this.howServed(client, method, deadline, waitForPeer)
        if (streams) { // a stream has no deadline unless its record gives one (a feed)
          const so = { ...o, timeout: rest.timeout === undefined || rest.timeout === 0 ? rest.timeout : deadline.left() }
          for await (const item of client.stream(method, data, so)) callback({ response: item })
        } else {
          for (const value of await client.request(method, data, { ...o, timeout: rest.timeout === 0 ? 0 : deadline.left(), values: true })) callback({ response: value })
        }
        callback({ isDisposed: true })
      } catch (err) {
        if (!abort.signal.aborted) { callback({ err }); abort.abort() } // the other servers' streams end
      }
    })())
    return () => abort.abort()
  }

  /**
   * send() with `all: true` in its record: the call goes to every server that serves the
   * pattern, as Nest's pub/sub transports deliver it, each opened as a stream so that each
   * value comes as that server's handler emits it; completes once every server's handler
   * completed, fails with the first server's error (a server that never completes ends at
   * the deadline, ERR_ZEROMESH_TIMEOUT, unless the caller stopped reading before).
   */
  async fromEvery (client, method, data, o, deadline, callback) {
    const servers = await client.serversOf(method, { timeout: deadline.left() })
    const so = { ...o, timeout: deadline.left() }
    await Promise.all(servers.map(async (endpoint) => {
      for await (const item of client.stream(method, data, { ...so, endpoint })) callback({ response: item })
    }))
    callback({ isDisposed: true })
  }

  /**
   * Whether `method` is a stream, by what the peers serving it said. A method none has spoken
   * of yet is waited for within the call's time: no peer up within connectTimeout fails
   * ECONNREFUSED; live peers none of which serves it fail at once with Nest's no-handler
   * error, unless `waitForPeer` (then one serving it is waited for).
   */
  async howServed (client, method, deadline, waitForPeer) {
    const now = client.streaming(method)
    if (now !== null) return now
    const timeout = deadline.timeout
    let served
    try {
      served = await client.howServed(method, { timeout: deadline.left(), connectTimeout: this.connectTimeout })
    } catch (err) {
      if (err?.neverUp === true) throw connectionRefused(err)
      if (err?.code === 'ERR_ZEROMESH_NO_PEERS') throw new NoPeersError(`zeromesh: no peer serving "${method}" was up within ${timeout} ms`)
      throw err
    }
    if (served !== null) return served === 'stream'
    if (!waitForPeer) throw noHandler(method)
    try {
      await client.waitFor(method, { timeout: deadline.left() })
    } catch (err) {
      if (err?.code === 'ERR_ZEROMESH_TIMEOUT') throw new NoPeersError(`zeromesh: no peer serving "${method}" was up within ${timeout} ms`)
      throw err
    }
    return client.streaming(method) === true
  }

  /**
   * emit(): publishes the event to every subscribing group (each server instance, unless
   * grouped), or broadcasts it to every subscribing instance (`broadcast: true` in its record);
   * resolves with { delivered } (or { sent } with ack: false).
   */
  dispatchEvent (packet) {
    return this.track(callOf(packet.pattern, packet.data, this.normalizePattern.bind(this)).then((c) => {
      const { broadcast = false, ...rest } = c.options ?? {}
      if (typeof broadcast !== 'boolean') throw invalidArgument('ZeromeshRecord: broadcast must be true or false')
      const o = { ...rest, headers: withMetadata(rest.headers, packet.metadata) }
      if (broadcast) return this.ensure().broadcast(c.method, c.data, o)
      return this.ensure().publish(c.method, c.data, o).catch((err) => { throw Array.isArray(rest.groups) ? withGroupHint(err, c.method, rest.groups) : err })
    }))
  }

  /** Counts `promise` in flight until it settles (close() waits for none). */
  track (promise) {
    this.inflight++
    const done = () => {
      if (--this.inflight === 0 && this.idle !== null) { this.idle.resolve(); this.idle = null }
    }
    promise.then(done, done)
    return promise
  }

  whenIdle () {
    if (this.inflight === 0) return Promise.resolve()
    if (this.idle === null) {
      let resolve
      const promise = new Promise((r) => { resolve = r })
      this.idle = { promise, resolve }
    }
    return this.idle.promise
  }
}

/**
 * The method (or event) name, data and options of a pattern and data: a contract's method or
 * event (its wire name; the data checked by its schema first), or a pattern Nest names; a
 * ZeromeshRecord's options. A check's refusal rejects with InvalidInputError.
 */
async function callOf (pattern, given, normalize) {
  const record = given instanceof ZeromeshRecord ? given : null
  const data = record === null ? given : record.data
  const options = record === null ? undefined : record.options
  const schema = contractSchema(pattern)
  if (schema === null) return { method: normalize(pattern), data, options }
  await check(schema, data, `invalid input for ${pattern.wire}`) // the original data is what is sent (the peer checks it again)
  return { method: pattern.wire, data, options }
}

/** The input (or payload) schema of a contract's method (or event), or null for any other pattern. */
function contractSchema (p) {
  if (p === null || typeof p !== 'object' || typeof p.wire !== 'string') return null
  const s = p.input ?? p.schema
  return s?.['~standard'] !== undefined ? s : null
}

/** Request headers with Nest's packet metadata (Nest 12) in METADATA_HEADER, as JSON. */
function withMetadata (headers, metadata) {
  if (metadata === undefined || metadata === null || Object.keys(metadata).length === 0) return headers
  return { ...headers, [METADATA_HEADER]: JSON.stringify(metadata) }
}

/**
 * A publish to named groups that none subscribes in: the message says how a server names the
 * group of its events (nest/handlers.js) and what to write on the server for one of `groups`.
 */
function withGroupHint (err, event, groups) {
  if (err?.code !== 'ERR_ZEROMESH_NO_SUBSCRIBERS') return err
  const g = groups[0]
  err.message += `. On zeromesh/nest an @EventPattern's group is its extras' group, else ZeromeshServer's group option, else one per server instance ("${event}@" and the instance's id): to reach group "${g}", give the servers new ZeromeshServer({ group: '${g}' }) or @EventPattern('${event}', { group: '${g}' }), or leave out groups to reach every instance`
  return err
}

/** What Nest's TCP client gives when nothing listens: code ECONNREFUSED; the zeromesh error (client.howServed()'s) is its cause. */
function connectionRefused (cause) {
  const err = new Error(`connect ECONNREFUSED: ${cause.message.replace(/^zeromesh: no peer/, 'no zeromesh peer')}`, { cause })
  err.code = 'ECONNREFUSED'
  return err
}

/** What Nest answers for a pattern no server handles, with the zeromesh code of an unknown method. */
function noHandler (method) {
  const err = new UnknownMethodError(NO_MESSAGE_HANDLER)
  err.pattern = method
  return err
}
