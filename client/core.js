// What the embeddable client is inside (the Client users hold, client.js, is its face): the
// composition root of its parts. The mesh (mesh.js) knows the peers; the one call
// lifecycle (calls.js) takes every call from start to settle; a kind says how a call is sent
// and answered (requests.js, streams.js, events.js); an event's fan-out to its deliveries is
// publishing.js. No promise outlives its deadline.
import { resolveClientOptions, requestOptionsChecker, streamOptionsChecker, eventOptionsChecker } from './options.js'
import { resolveStrategy } from './strategies/index.js'
import { ClientMesh } from './mesh.js'
import { CallPath } from './call-path.js'
import { CapacityWait } from './capacity.js'
import { RetryBudget } from './retry-budget.js'
import { ClientTracing } from './tracing.js'
import { Calls } from './calls.js'
import { Call } from './call.js'
import { EntryCalls } from './entry-calls.js'
import { requestCodec } from './requests.js'
import { Streams } from './streams.js'
import { eventCodec } from './events.js'
import { Publishing, checkEvent } from './publishing.js'
import { contractProxy } from './contract-proxy.js'
import { CallContext, pendingStream } from './call-context.js'
import { runChain, middlewareOf } from '../runtime/middleware.js'
import { MAX_REQUEST_ID } from '../protocol/constants.js'
import { ClosedError, NoPeersError, invalidArgument } from '../protocol/errors.js'
import { Gather } from './gather.js'
import { userFault, safeEmit, safeLogger } from '../runtime/user-code.js'
import { deprecated } from '../runtime/deprecated.js'
import { SILENT_LOGGER, checkMethod } from '../runtime/options.js'
import { MAX_TIMER_MS } from '../runtime/clock.js'
import { Deadline } from './deadline.js'

export class ClientCore {
  /**
   * @param {object} options  ClientOptions (index.d.ts; docs/reference/client.md)
   * @param {import('node:events').EventEmitter} emitter  the Client users hold: its events are told there
   */
  constructor (options, emitter) {
    const o = resolveClientOptions(options)
    o.logger = safeLogger(o.logger, (level, err) => userFault(emitter, SILENT_LOGGER, `the logger's ${level}()`, err))
    this.options = o
    this.requestOptions = requestOptionsChecker(o)
    this.streamOptions = streamOptionsChecker(o)
    this.middleware = [] // client.use()'s, in order (runtime/middleware.js)
    this.nextId = 1
    this.closing = null
    const strategy = resolveStrategy(o.strategy, { random: o.random, now: () => o.clock.now() }) // may throw: before any socket
    const mesh = this.mesh = new ClientMesh(o, (snapshot) => safeEmit(emitter, o.logger, 'peer', snapshot))
    const strategyFault = (err) => userFault(emitter, o.logger, 'strategy.select', err)
    // Where every attempt goes, whatever its kind (call-path.js).
    const path = new CallPath({
      table: mesh.table,
      router: mesh.router,
      zones: mesh.zones,
      strategy,
      clock: o.clock,
      mayStillRoute: (method, version, where, group) => mesh.mayStillRoute(method, version, where, group),
      nothingUp: () => mesh.nothingUp(),
      strategyFault,
    })
    // Calls refused busy by every peer that may take them wait for a place (capacity.js).
    this.capacity = new CapacityWait({ clock: o.clock, peers: () => mesh.table.entries.values() })
    this.budget = new RetryBudget({ ...o.retryBudget, clock: o.clock })
    this.tracing = new ClientTracing() // CLIENT spans, when a tracer provider is registered
    this.calls = new Calls({
      clock: o.clock,
      path,
      table: mesh.table,
      capacity: this.capacity,
      budget: this.budget,
      ejector: mesh.ejector,
      strategy,
      tracing: this.tracing,
      maxAttempts: o.maxAttempts,
      maxPending: o.maxPending,
      maxPendingBytes: o.maxPendingBytes,
      random: o.random,
      send: mesh.send,
      notServing: (peer, method) => mesh.notServing(peer, method),
      retired: (peer) => mesh.retire(peer),
      userFault: (what, err) => userFault(emitter, o.logger, what, err),
      unroutable: (call) => mesh.unroutable(call),
    })
    this.requests = new EntryCalls(requestCodec(), { send: mesh.send, maxMessageSize: o.maxMessageSize, calls: this.calls })
    this.streams = new Streams({ clock: o.clock, send: mesh.send, maxMessageSize: o.maxMessageSize, calls: this.calls })
    this.events = new EntryCalls(eventCodec(), { send: mesh.send, maxMessageSize: o.maxMessageSize, calls: this.calls })
    // What a publish or broadcast does before its deliveries (publishing.js).
    this.publishing = new Publishing({
      clock: o.clock,
      membersTimeout: o.membersTimeout,
      publishOptions: eventOptionsChecker(o, false),
      broadcastOptions: eventOptionsChecker(o, true),
      admit: (event, options, check, what) => this.admit(event, options, check, (e) => checkEvent(e, what)),
      newId: () => this.newId(),
      kind: this.events,
      start: (call, now) => this.calls.start(call, now),
      view: {
        groupsOf: (event) => mesh.groupsOf(event),
        subscribersOf: (event) => mesh.subscribersOf(event),
        learning: () => mesh.learning(),
        reach: (endpoint) => mesh.reach(endpoint),
        called: (key) => mesh.called(key),
      },
    })
    this.gathering = new Gather({
      clock: o.clock,
      timeout: o.timeout,
      membersTimeout: o.membersTimeout,
      view: { serversOf: (method) => mesh.serversOf(method), learning: () => mesh.learning(), reach: (endpoint) => mesh.reach(endpoint), methodWaiters: mesh.methodWaiters },
      request: (method, args, options, pin) => this.request(method, args, options, pin),
    })
    const holdReplies = (peer) => { this.requests.hold(peer); this.events.hold(peer) } // the callers a frame of replies wakes send in one frame
    mesh.serve({
      lost: (peer, notTaken) => this.calls.lost(peer, notTaken),
      routesChanged: () => this.calls.routesChanged(),
      refusedByAll: (err) => this.calls.refusedByAll(err),
      replies: (peer, replies, bytes) => this.calls.replies(peer, replies, bytes, holdReplies),
      stream: (peer, msg, bytes) => this.streams.onMessage(peer, msg, bytes),
    })
  }

  /** A LatencyHistogram of each request's whole time (ops/metrics.js sets it). */
  get latency () { return this.calls.latency }
  set latency (h) { this.calls.latency = h }

  /**
   * Adds `fn`, an `async (ctx, next) => ...` middleware, to the end of the chain every
   * request and stream of this client goes through, once per call: retries and hedges happen
   * inside next() (docs/guides/middleware.md). Returns the client.
   */
  use (fn) {
    this.middleware.push(middlewareOf(fn, 'client.use(fn)'))
    return this
  }

  /**
   * Sends `method(args)` to a peer and resolves with its result (docs/reference/client.md).
   * `pin`: the one endpoint it may go to (a gather's request), null for any.
   */
  request (method, args, options, pin = null) {
    if (this.middleware.length === 0) return this.send(method, args, options, null, pin)
    const ctx = new CallContext('request', method, args, options)
    return runChain(this.middleware, ctx, () => this.send(ctx.method, ctx.args, ctx.sendOptions(), ctx, pin))
  }

  /**
   * Sends `method(args)` to every peer that serves it, each pinned to its peer, under one
   * deadline: resolves with { replies: [{ endpoint, value }], failed: [{ endpoint, error }],
   * unreached: [{ endpoint, reason }] } (docs/reference/client.md).
   */
  gather (method, args, options) {
    try {
      this.admit(method, options, (given) => { // checked once, before any peer is asked
        if (given?.key !== undefined || given?.hedge != null || given?.endpoint != null) throw invalidArgument('gather reaches every peer that serves the method: leave out key, hedge and endpoint')
        return this.requestOptions(given)
      })
    } catch (err) {
      return Promise.reject(err)
    }
    return this.gathering.gather(method, args, options)
  }

  /** request() past the middleware; `report` (the chain's ctx, or null) learns the peer that answered and the attempts. */
  send (method, args, options, report, pin = null) {
    let o
    try {
      o = this.admit(method, options, this.requestOptions)
    } catch (err) {
      return Promise.reject(err)
    }
    const now = this.options.clock.now()
    const call = this.requests.adopt(new Call(this.requests, this.newId(), method, args, o, now))
    call.report = report
    call.pin = pin ?? o.endpoint
    if (pin === null && o.endpoint !== null) this.mesh.reach(o.endpoint) // a peer it does not know is dialled for it
    this.mesh.called(method)
    this.calls.start(call, now)
    return call.promise
  }

  /**
   * Opens a stream: `method(args)` on a peer whose handler yields items. Returns an async
   * iterable of them at once; errors come out of the iteration, each with `items`, how many
   * items arrived (docs/guides/streams.md).
   */
  stream (method, args, options, pin = null) {
    if (this.middleware.length === 0) return this.openStream(method, args, options, pin)
    // The chain is asynchronous and the stream is iterable at once: it opens when the chain
    // reaches next(), and a middleware's error comes out of the iteration.
    const ctx = new CallContext('stream', method, args, options)
    return pendingStream(runChain(this.middleware, ctx, () => this.openStream(ctx.method, ctx.args, ctx.sendOptions(), pin)))
  }

  /** stream() past the middleware; `pin` as request()'s. */
  openStream (method, args, options, pin = null) {
    const o = this.admit(method, options, this.streamOptions)
    const now = this.options.clock.now()
    const call = new Call(this.streams, this.newId(), method, args, o, now)
    const s = this.streams.adopt(call, o)
    call.pin = pin ?? o.endpoint
    if (pin === null && o.endpoint !== null) this.mesh.reach(o.endpoint)
    this.mesh.called(method)
    this.calls.start(call, now)
    return s
  }

  /**
   * Publishes `event` with `payload`: one delivery to one peer of each group that subscribes
   * (docs/guides/events.md). Resolves with { delivered: [{ group, endpoint }] } once each
   * group's handler finished ({ sent } with `ack: false`), rejects with a group's error
   * (carrying `delivered` and `failed`) when one did not, or with NoSubscribersError when no
   * group subscribes within the deadline.
   */
  publish (event, payload, options) {
    return this.throughChain('publish', event, payload, options, (e, p, o) => this.options.durable?.owns(e) ? this.durableOnly(() => this.options.durable.publish(e, p, o)) : this.publishing.publish(e, p, o))
  }

  /**
   * Delivers `event` with `payload` to every peer that subscribes to it, in every group,
   * connected or not (docs/guides/events.md). Resolves with { delivered: [{ endpoint }],
   * failed: [{ endpoint, error }], unreached: [{ endpoint, reason }] }; rejects with
   * NoSubscribersError when no peer subscribes within the deadline.
   */
  broadcast (event, payload, options) {
    return this.throughChain('broadcast', event, payload, options, (e, p, o) => this.options.durable?.owns(e) ? this.durableOnly(() => Promise.reject(invalidArgument(`broadcast("${e}"): "${e}" is a durable event (the durable option); durable events are published, never broadcast (docs/guides/events.md#durable-events)`))) : this.publishing.broadcast(e, p, o))
  }

  /** A durable event's `send()`, unless this client is closed. */
  durableOnly (send) {
    return this.closing === null ? send() : Promise.reject(new ClosedError('zeromesh: the client was closed'))
  }

  /** An event through the middleware (ctx.kind 'publish' or 'broadcast', ctx.method the event, ctx.args the payload), then `send`. */
  throughChain (kind, event, payload, options, send) {
    if (this.middleware.length === 0) return send(event, payload, options)
    const ctx = new CallContext(kind, event, payload, options)
    return runChain(this.middleware, ctx, () => send(ctx.method, ctx.args, ctx.sendOptions()))
  }

  /**
   * The one prologue of every call, whatever its kind: its name checked (`nameCheck`, a
   * method's by default), its options as `check` makes them, and the client's refusal (closed,
   * or as many calls as it may hold); throws the first that fails, else returns the options.
   */
  admit (name, options, check, nameCheck = checkMethod) {
    nameCheck(name)
    const o = check(options)
    const refused = this.refusal()
    if (refused !== null) throw refused
    return o
  }

  /** Why a new call is refused now (the client is closed, or holds as many calls as it may), or null. */
  refusal () {
    if (this.closing !== null) return new ClosedError('zeromesh: the client is closed')
    return this.calls.full()
  }

  newId () {
    const id = this.nextId
    this.nextId = id === MAX_REQUEST_ID ? 1 : id + 1
    return id
  }

  /** Takes in a member list (member-lists.js). */
  learn (members, from) {
    this.mesh.lists.learn(members, from)
  }

  /** The peers this client knows, with their state as this client sees it. */
  peers () {
    return this.mesh.table.snapshot()
  }

  /** Counters: requests, successes, retries, attempt timeouts, retries refused by the budget, failures by code, member lists fetched. */
  stats () {
    const { calls, requests, streams, mesh } = this
    return {
      requests: requests.counts.started,
      ok: requests.counts.ok,
      ...calls.counts,
      failed: { ...calls.counts.failed },
      ...mesh.counts,
      streams: { opened: streams.counts.started, ok: streams.counts.ok, failed: streams.counts.failed },
      events: { deliveries: this.events.counts.started, ok: this.events.counts.ok, failed: this.events.counts.failed, redelivered: this.events.counts.redelivered },
      inflight: calls.pending.size,
      waiting: this.capacity.size,
      waited: this.capacity.counts.waited,
      probes: this.capacity.counts.probes,
      memberLists: mesh.discovery.counts.lists,
      memberFetches: mesh.discovery.counts.fetches,
    }
  }

  /** A peer's view of the cluster (`from`, or a random up peer), as that peer's `members()` shows it. */
  members (from) {
    return this.mesh.members(from)
  }

  /** Resolves once some peer that is up serves `method` (docs/reference/client.md), with their endpoints. */
  waitFor (method, options) {
    if (this.closing !== null) return Promise.reject(new ClosedError('zeromesh: the client is closed'))
    return this.mesh.methodWaiters.add(method, options)
  }

  /**
   * Whether `method` is served as a stream, by what the up peers serving it said (PROTOCOL.md
   * 4.8.2): true (call it with stream()), false (with request()), or null when none has said
   * yet (waitFor(method) first). For callers that know only a name, such as zeromesh/nest.
   */
  streaming (method) {
    return this.mesh.streaming(method)
  }

  /**
   * A deadline of `timeout` ms on this client's clock (its `timeout` when left out), checked
   * as a request's timeout is: { timeout, at, left(), passed } (docs/reference/client.md).
   */
  deadline (timeout) {
    const o = timeout === undefined ? this.requestOptions(undefined) : this.requestOptions({ timeout })
    return new Deadline(this.options.clock, o.timeout)
  }

  /**
   * How `method` is served, for a caller that knows it by its name only (zeromesh/nest):
   * resolves with 'stream' or 'request' once an up peer serves it, or null when none does nor
   * may one come (the peers known said what they serve). Rejects with NoPeersError after
   * `timeout` ms, or after `connectTimeout` ms when no peer came up by then (`neverUp` true
   * on the error: no peer was ever up) (docs/reference/client.md).
   */
  howServed (method, options) {
    let timeout, connect
    try {
      checkMethod(method, 'howServed(method): method')
      const { connectTimeout, ...rest } = options ?? {}
      timeout = this.deadline(rest.timeout).timeout
      if (Object.keys(rest).some((k) => k !== 'timeout')) throw invalidArgument(`howServed(method, options): known options are timeout and connectTimeout, got ${Object.keys(options).join(', ')}`)
      connect = connectTimeout === undefined ? timeout : Math.min(timeout, this.deadline(connectTimeout).timeout)
    } catch (err) {
      return Promise.reject(err)
    }
    const tried = () => this.mesh.table.snapshot().map((p) => p.endpoint).join(', ') || 'no seed'
    const timedOut = (neverUp) => neverUp
      ? Object.assign(new NoPeersError(`zeromesh: no peer answered within ${connect} ms (tried ${tried()})`), { neverUp: true })
      : Object.assign(new NoPeersError(`zeromesh: no peer serving "${method}" was up within ${timeout} ms`), { neverUp: false })
    return this.served(method, timeout, timedOut, connect).then((s) => s === null ? null : s ? 'stream' : 'request')
  }

  /** howServed() past its options: true (a stream), false (a request) or null; `timedOut(neverUp)` its error. */
  served (method, timeout, timedOut, connect) {
    if (this.closing !== null) return Promise.reject(new ClosedError('zeromesh: the client is closed'))
    const { mesh } = this
    const probe = { method, version: null, where: null, group: undefined, kind: { unroutable: () => true } }
    const clock = this.options.clock
    let connecting = null
    const test = () => {
      const s = mesh.streaming(method)
      if (s !== null) return s
      if (!mesh.table.anyEverUp()) return null
      return mesh.unroutable(probe) === null ? null : 'none'
    }
    const w = mesh.methodWaiters.watch(test, timeout, () => timedOut(!mesh.table.anyEverUp()))
    // No peer up within `connect` ms: the seeds do not answer; fail then, not at the timeout.
    if (connect < timeout) connecting = clock.setTimeout(() => { if (!mesh.table.anyEverUp()) w.cancel(timedOut(true)) }, connect)
    return w.promise.then((v) => v === 'none' ? null : v).finally(() => { if (connecting !== null) clock.clearTimeout(connecting) })
  }

  /**
   * The endpoints of every peer that serves `method`, as gather() reaches them (members
   * outside the subset included, each dialled), once this client knows the cluster; rejects
   * with NoPeersError when none serves it within `timeout` (docs/reference/client.md).
   */
  serversOf (method, options) {
    let timeout
    try {
      checkMethod(method, 'serversOf(method): method')
      if (Object.keys(options ?? {}).some((k) => k !== 'timeout')) throw invalidArgument('serversOf(method, options): the one option is timeout')
      timeout = this.deadline(options?.timeout).timeout
    } catch (err) {
      return Promise.reject(err)
    }
    if (this.closing !== null) return Promise.reject(new ClosedError('zeromesh: the client is closed'))
    return this.gathering.servers(method, timeout).then((them) => { for (const ep of them) this.mesh.reach(ep); return them })
  }

  /** A typed client of `contract` (docs/guides/contracts.md): a function per method. */
  proxy (contract, options) {
    return contractProxy(contract, { request: (m, a, o) => this.request(m, a, o), stream: (m, a, o) => this.stream(m, a, o), publish: (e, p, o) => this.publish(e, p, o), broadcast: (e, p, o) => this.broadcast(e, p, o) }, options)
  }

  /** @deprecated since 0.3.0: proxy(contract), the same thing ("service" names what a peer serves). */
  service (contract, options) {
    deprecated('ZEROMESH_DEP_CLIENT_SERVICE', 'client.service(contract) is deprecated: use client.proxy(contract), the same typed calls')
    return this.proxy(contract, options)
  }

  /** What the peer at `endpoint` serves, asked of it (docs/reference/client.md). */
  describe (endpoint) {
    return this.mesh.describe(endpoint)
  }

  /**
   * Takes no new call (ClosedError) and, with `drain` ms, lets the calls in flight (sent, or
   * waiting for a peer, a place or a subscriber) settle for up to that long; then rejects
   * what is left with ClosedError and closes the socket (docs/reference/client.md).
   */
  close (options) {
    if (this.closing !== null) return this.closing
    let drain
    try {
      if (options !== undefined && (options === null || typeof options !== 'object' || Object.keys(options).some((k) => k !== 'drain'))) throw invalidArgument('close(options): the one option is drain, the longest wait in ms for the calls in flight')
      drain = options?.drain ?? 0
      if (!Number.isInteger(drain) || drain < 0 || drain > MAX_TIMER_MS) throw invalidArgument(`close({ drain }): drain must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${JSON.stringify(drain)}`)
    } catch (err) {
      return Promise.reject(err)
    }
    const err = new ClosedError('zeromesh: the client was closed')
    this.closing = (async () => {
      if (drain > 0) await this.drained(drain)
      this.mesh.stop(err)
      this.calls.close(err)
      await this.mesh.close()
    })()
    return this.closing
  }

  /**
   * Resolves once no call is pending (calls.js) nor waiting to become one (a publish for its
   * subscribers, a gather for its servers: method-waiters.js), or after `ms`. Looked at a
   * timer's turn after each change, so a wait that turns into calls is seen as calls.
   */
  drained (ms) {
    const { calls, mesh } = this
    const clock = this.options.clock
    const idle = () => calls.pending.size === 0 && mesh.methodWaiters.waiting.size === 0
    if (idle()) return Promise.resolve()
    return new Promise((resolve) => {
      let look = null
      const done = () => {
        clock.clearTimeout(limit)
        if (look !== null) clock.clearTimeout(look)
        calls.onSettled = null
        mesh.methodWaiters.onEnded = null
        resolve()
      }
      const limit = clock.setTimeout(done, ms)
      calls.onSettled = mesh.methodWaiters.onEnded = () => {
        if (look === null) look = clock.setTimeout(() => { look = null; if (idle()) done() }, 0)
      }
    })
  }
}
