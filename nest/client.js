// ZeromeshClient: a NestJS ClientProxy over a zeromesh Client, for
// ClientsModule.register([{ name, customClass: ZeromeshClient, options: { seeds } }]).
// - send(pattern, data) calls the method of the pattern's name (a string as it is, an object
//   pattern as Nest names it): a stream when the peers say it streams (PROTOCOL.md 4.8.2), each
//   item a value of the Observable, or a request, its result the one value.
// - emit(pattern, data) publishes the event: the Observable gives { delivered } once each
//   subscribing group's handler finished, or the error of a group that failed.
// - A contract's method (contract.methods.x) or event (contract.events.y) as the pattern: the
//   input or payload is checked before it is sent, and send() is typed by it.
// - ZeromeshRecord(data, options) as the data gives that call its options (headers, timeout,
//   key, idempotent; for emit, groups and ack).
// - close() (Nest calls it at application shutdown) lets the calls in flight finish, within
//   drainTimeout, before it closes the client; calls made meanwhile still go out.
import { ClientProxy } from '@nestjs/microservices'
import { Client, insideOf } from '../client/client.js'
import { resolveClientOptions } from '../client/options.js'
import { check } from '../runtime/contract.js'
import { invalidArgument, NoPeersError } from '../protocol/errors.js'

/** Data with the options of its call: client.send('x', new ZeromeshRecord(data, { headers, timeout })). */
export class ZeromeshRecord {
  constructor (data, options = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgument('new ZeromeshRecord(data, options): options must be an object of call options (timeout, headers, key, idempotent; for emit, groups and ack)')
    this.data = data
    this.options = options
  }
}

export class ZeromeshClient extends ClientProxy {
  /**
   * @param {object} [options]  a zeromesh Client's options (seeds, timeout, security, ...), and:
   * @param {number} [options.drainTimeout]  how long close() waits for the calls in flight (default: the client's timeout)
   */
  constructor (options = {}) {
    super()
    if (options === null || typeof options !== 'object') throw invalidArgument('new ZeromeshClient(options): options must be an object of Client options, such as { seeds: [...] }')
    const { drainTimeout, ...clientOptions } = options
    if (drainTimeout !== undefined && !(Number.isInteger(drainTimeout) && drainTimeout >= 0)) throw invalidArgument(`new ZeromeshClient(options): drainTimeout must be a whole number of milliseconds, got ${JSON.stringify(drainTimeout)}`)
    // Checked now, as the zeromesh Client will check them: a missing seed or a bad option fails
    // where the module is declared, not at the first call.
    try {
      resolveClientOptions(clientOptions)
    } catch (err) {
      throw invalidArgument(`new ZeromeshClient(options): ${err.message.replace(/^zeromesh: /, '')}`)
    }
    this.clientOptions = clientOptions
    this.drainTimeout = drainTimeout ?? null
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

  /** Lets the calls in flight finish (within drainTimeout), then closes the client. */
  close () {
    if (this.closing !== null) return this.closing
    const client = this.client
    if (client === null) return Promise.resolve()
    this.closing = (async () => {
      const limit = this.drainTimeout ?? insideOf(client).options.timeout
      if (this.inflight > 0) {
        let timer
        await Promise.race([this.whenIdle(), new Promise((resolve) => { timer = setTimeout(resolve, limit) })])
        clearTimeout(timer)
      }
      this.client = null
      await client.close()
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

  /** send(): a request, or a stream when the peers serve the method as one. */
  publish (packet, callback) {
    const abort = new AbortController()
    this.track((async () => {
      try {
        const { method, data, options } = await callOf(packet.pattern, packet.data, this.normalizePattern.bind(this))
        const o = { ...options, signal: options?.signal === undefined ? abort.signal : AbortSignal.any([options.signal, abort.signal]) }
        const client = this.ensure()
        if (await this.streams(client, method, o)) {
          for await (const item of client.stream(method, data, o)) callback({ response: item })
          callback({ isDisposed: true })
        } else {
          callback({ response: await client.request(method, data, o), isDisposed: true })
        }
      } catch (err) {
        if (!abort.signal.aborted) callback({ err })
      }
    })())
    return () => abort.abort()
  }

  /**
   * Whether `method` is a stream, by what the peers serving it said; a method none has spoken
   * of yet is waited for (waitFor) within the call's timeout, then sent as a request.
   */
  async streams (client, method, o) {
    const now = client.streaming(method)
    if (now !== null) return now
    const timeout = o.timeout ?? insideOf(client).options.timeout
    try {
      await client.waitFor(method, { timeout })
    } catch (err) {
      if (err?.code === 'ERR_ZEROMESH_TIMEOUT') throw new NoPeersError(`zeromesh: no peer serving "${method}" was up within ${timeout} ms`)
      throw err
    }
    return client.streaming(method) === true
  }

  /** emit(): publishes the event; resolves with { delivered } (or { sent } with ack: false). */
  dispatchEvent (packet) {
    return this.track(callOf(packet.pattern, packet.data, this.normalizePattern.bind(this)).then((c) => this.ensure().publish(c.method, c.data, c.options)))
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
