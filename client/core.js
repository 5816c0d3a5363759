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
import { Publishing } from './publishing.js'
import { contractProxy } from './contract-proxy.js'
import { CallContext, pendingStream } from './call-context.js'
import { runChain, middlewareOf } from '../runtime/middleware.js'
import { MAX_REQUEST_ID } from '../protocol/constants.js'
import { ClosedError, invalidArgument } from '../protocol/errors.js'
import { Gather } from './gather.js'
import { userFault, safeEmit, safeLogger } from '../runtime/user-code.js'
import { deprecated } from '../runtime/deprecated.js'
import { SILENT_LOGGER, checkMethod } from '../runtime/options.js'

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
      refusal: () => this.refusal(),
      newId: () => this.newId(),
      kind: this.events,
      start: (call, now) => this.calls.start(call, now),
      view: {
        groupsOf: (event) => mesh.groupsOf(event),
        subscribersOf: (event) => mesh.subscribersOf(event),
        learning: () => mesh.learning(),
        reach: (endpoint) => mesh.reach(endpoint),
        called: (key) => mesh.called(key),
        methodWaiters: mesh.methodWaiters,
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
      checkMethod(method)
      if (options?.key !== undefined || options?.hedge != null) throw invalidArgument('gather reaches every peer that serves the method: leave out key and hedge')
      this.requestOptions(options) // checked once, before any peer is asked
    } catch (err) {
      return Promise.reject(err)
    }
    const refused = this.refusal()
    if (refused !== null) return Promise.reject(refused)
    return this.gathering.gather(method, args, options)
  }

  /** request() past the middleware; `report` (the chain's ctx, or null) learns the peer that answered and the attempts. */
  send (method, args, options, report, pin = null) {
    let o
    try {
      checkMethod(method)
      o = this.requestOptions(options)
    } catch (err) {
      return Promise.reject(err)
    }
    const refused = this.refusal()
    if (refused !== null) return Promise.reject(refused)
    const now = this.options.clock.now()
    const call = this.requests.adopt(new Call(this.requests, this.newId(), method, args, o, now))
    call.report = report
    call.pin = pin
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
    checkMethod(method)
    const o = this.streamOptions(options)
    const refused = this.refusal()
    if (refused !== null) throw refused
    const now = this.options.clock.now()
    const call = new Call(this.streams, this.newId(), method, args, o, now)
    const s = this.streams.adopt(call, o)
    call.pin = pin
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
   * For zeromesh/nest, which knows a method by its name only: resolves once this client can
   * tell how `method` is served, with true (a stream) or false (a request) when an up peer
   * serves it, or null when none does nor may one come (the peers known said what they serve).
   * Rejects with `timedOut(unreached)` after `timeout` ms, or after `connect` ms when no peer
   * came up by then (`unreached` true: no peer was ever up).
   */
  howServed (method, timeout, timedOut, connect = timeout) {
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

  /** For zeromesh/nest: the endpoints of every peer that serves `method` (gather()'s), each dialled, within `timeout`. */
  serversOf (method, timeout) {
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

  /** Rejects every pending call with ClosedError and closes the socket. */
  close () {
    if (this.closing !== null) return this.closing
    const err = new ClosedError('zeromesh: the client was closed')
    this.closing = (async () => {
      this.mesh.stop(err)
      this.calls.close(err)
      await this.mesh.close()
    })()
    return this.closing
  }
}
