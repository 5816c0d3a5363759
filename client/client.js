// The embeddable client: keeps a table of peers, picks one per request through the
// strategy, sends, and fails over. No promise outlives its deadline.
import { EventEmitter } from 'node:events'
import { PeerTable } from './peer-table.js'
import { resolveClientOptions, requestOptionsChecker, streamOptionsChecker } from './options.js'
import { ClientStreams } from './streams.js'
import { resolveStrategy } from './strategies/index.js'
import { Call } from './call.js'
import { IdTable } from '../runtime/id-table.js'
import { Discovery } from './discovery.js'
import { ServiceBook, ANY } from './services.js'
import { serviceClient } from './service-proxy.js'
import { CallContext, pendingStream } from './call-context.js'
import { runChain, middlewareOf } from '../runtime/middleware.js'
import { Questions } from '../transport/questions.js'
import { KeyProver } from './key-prover.js'
import { Connections } from './connections.js'
import { Liveness } from './liveness.js'
import { Router } from './routing.js'
import { ZonePreference } from './zone.js'
import { Roster } from './roster.js'
import { MethodWaiters } from './method-waiters.js'
import { RetryBudget } from './retry-budget.js'
import { Attempts } from './attempts.js'
import { CapacityWait } from './capacity.js'
import { CallPath, Kind } from './call-path.js'
import { Ejector } from './ejection.js'
import { TimerLists } from './timer-lists.js'
import { ClientTracing } from './tracing.js'
import { MemberLists } from './member-lists.js'
import { askMembers, askService } from './asks.js'
import { decode, hasSignature } from '../protocol/codec.js'
import { MessageType, MAX_REQUEST_ID } from '../protocol/constants.js'
import { ClosedError, BusyError, UnknownMethodError, invalidArgument } from '../protocol/errors.js'
import { userFault, safeEmit, safeLogger } from '../runtime/user-code.js'
import { SILENT_LOGGER } from '../runtime/options.js'
import { dnsSeedsOf } from '../transport/dns-seeds.js'

const MAX_ROUND_PAUSE_MS = 200 // longest pause before trying again peers that all refused

export class Client extends EventEmitter {
  /** @param {object} options  ClientOptions (index.d.ts; README, API) */
  constructor (options) {
    super()
    const o = resolveClientOptions(options)
    o.logger = safeLogger(o.logger, (level, err) => userFault(this, SILENT_LOGGER, `the logger's ${level}()`, err))
    this.options = o
    this.requestOptions = requestOptionsChecker(o)
    this.middleware = [] // client.use()'s, in order (runtime/middleware.js)
    this.streamOptions = streamOptionsChecker(o)
    this.clock = o.clock
    this.strategy = resolveStrategy(o.strategy, { random: o.random, now: () => o.clock.now() })
    this.table = new PeerTable((snapshot) => {
      this.router.changed()
      o.logger.debug({ peer: snapshot.endpoint, state: snapshot.state, removed: snapshot.removed === true, lastError: snapshot.lastError }, `peer ${snapshot.endpoint} ${snapshot.removed ? 'removed' : snapshot.state}`)
      safeEmit(this, o.logger, 'peer', snapshot)
    }, () => o.clock.now())
    this.router = new Router(this.table) // which peers may take a request (method, version, labels)
    this.zones = o.zone === null ? null : new ZonePreference({ zone: o.zone, random: o.random })
    // Where every attempt goes, requests, hedges and streams alike (call-path.js).
    this.path = new CallPath({
      table: this.table,
      router: this.router,
      zones: this.zones,
      strategy: this.strategy,
      clock: o.clock,
      mayStillRoute: (method, version, where) => this.mayStillRoute(method, version, where),
      nothingUp: () => { this.dns?.refresh(); this.lists.restoreSeeds() }, // the names may point elsewhere now
      strategyFault: (err) => this.strategyFault(err),
    })
    this.methodWaiters = new MethodWaiters({ router: this.router, clock: o.clock, timeout: o.timeout, where: o.where })
    this.ejector = new Ejector({ table: this.table, clock: o.clock, ...o.ejection })
    this.pending = new IdTable() // id -> Call (why not a Map: id-table.js)
    this.parked = new Set() //  calls waiting for any peer to come up
    this.pendingBytes = 0 //    request bytes of the calls in `pending`, as encoded (maxPendingBytes)
    // Calls refused busy by every peer that may take them wait for a place (capacity.js).
    this.capacity = new CapacityWait({ clock: o.clock, peers: () => this.table.entries.values() })
    this.waitingCalls = {
      fits: (call, peer) => this.path.fits(call, Kind.REQUEST, peer),
      pick: (call) => this.path.open(call, Kind.REQUEST),
      fail: (call, err) => this.settle(call, err),
      hand: (call, peer) => { call.newRound(); this.attempts.attempt(call, peer) },
      expire: (call, why) => this.settle(call, new BusyError(`zeromesh: "${call.method}" cannot start before its deadline: ${why}`)),
    }
    this.nextId = 1
    this.closing = null
    this.counts = {
      requests: 0, ok: 0, retries: 0, hedges: 0, attemptTimeouts: 0, budgetExhausted: 0, ejections: 0, malformed: 0, failed: {},
      peersRefused: 0, // peers a member list named that were not taken: over maxPeers, or refused by ZeroMQ
      redials: 0, //     peers dialled at once because the lists showed them alive again while their connection was down
      offLoopback: 0, // endpoints off loopback a plain client was given (lists, DNS) and never dialled
      beyondHorizon: 0, // list claims refused: an incarnation more than 24 h ahead of the wall clock
      verified: 0, //    peers a list showed gone that answered the client themselves, and stayed in rotation
      proofs: 0, //      key proofs sent (a secured client, on each new connection: client/key-prover.js)
    }
    this.budget = new RetryBudget({ ...o.retryBudget, clock: o.clock })
    this.latency = null // a LatencyHistogram (ops/metrics.js) once metrics are on: each request's whole time
    this.tracing = new ClientTracing() // CLIENT spans, when a tracer provider is registered
    this.deadlines = new TimerLists(o.clock, (call) => this.attempts.onDeadline(call))
    // client.stream(): open streams, by id (ids shared with requests)
    this.streams = new ClientStreams({
      clock: o.clock,
      transport: { send: (ep, frames, done) => this.transport.send(ep, frames, done) },
      table: this.table,
      path: this.path,
      capacity: this.capacity,
      tracing: this.tracing,
      counts: this.counts,
      maxMessageSize: o.maxMessageSize,
      notServing: (peer, method) => this.notServing(peer, method),
    })
    // What a connection's events do to the table (connections.js). Its parts are made below:
    // it gets the few calls it makes on them.
    this.connections = new Connections({
      table: this.table,
      transport: { connect: (ep) => this.transport.connect(ep), disconnect: (ep) => this.transport.disconnect(ep) },
      counts: this.counts,
      security: o.security,
      discover: o.discover,
      logger: o.logger,
      closed: () => this.closing !== null,
      liveness: { stop: (peer) => this.liveness.stop(peer), checkDown: (peer) => this.liveness.checkDown(peer) },
      discovery: { forget: (ep) => this.discovery.forget(ep), peerUp: (ep) => this.discovery.peerUp(ep) },
      questions: { forget: (ep) => this.questions.forget(ep) },
      services: { ask: (ep) => this.services.ask(ep) },
      prover: o.security ? { prove: (ep, done) => this.prover.prove(ep, done) } : null,
      ejector: this.ejector,
      capacity: this.capacity,
      router: this.router,
      failOver: (peer, notTaken) => this.attempts.failOver(peer, notTaken),
      routesChanged: () => this.routesChanged(),
      refusedByAll: (err) => {
        const parked = [...this.parked]
        this.parked.clear()
        for (const call of parked) this.settle(call, err)
        this.streams.routesChanged() // streams waiting for a peer fail the same way (call-path.js)
      },
    })
    this.transport = o.transport({ // a connector (options.js: the transport option)
      maxMessageSize: o.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval,
      heartbeatTimeout: o.heartbeatTimeout,
      onMessage: (ep, frames) => this.onMessage(ep, frames),
      onUp: (ep) => this.connections.up(ep),
      onDown: (ep) => this.connections.down(ep, 'disconnected'),
      credentials: o.security || null,
      onRefused: (ep, refusal) => this.connections.refused(ep, refusal),
    })
    // Sent, answered, timed out, lost; failover (attempts.js).
    this.attempts = new Attempts({
      clock: o.clock,
      table: this.table,
      transport: this.transport,
      counts: this.counts,
      maxMessageSize: o.maxMessageSize,
      maxAttempts: o.maxAttempts,
      random: o.random,
      path: this.path,
      capacity: this.capacity,
      tracing: this.tracing,
      strategy: this.strategy,
      ejector: this.ejector,
      budget: this.budget,
      pending: this.pending,
      dispatch: (call, now) => this.dispatch(call, now),
      settle: (call, err, value) => this.settle(call, err, value),
      sized: (bytes) => { this.pendingBytes += bytes },
      streamsLost: (peer, notTaken) => this.streams.peerLost(peer, notTaken),
      notServing: (peer, method) => this.notServing(peer, method),
      retired: (peer) => this.connections.remove(peer),
      userFault: (what, err) => userFault(this, o.logger, what, err),
      unroutable: (call) => this.router.candidates(call.method, call.version, call.where).length === 0 && !this.router.mayCome(call.method, call.version, call.where, (d) => this.services.known(d))
        ? new UnknownMethodError(`zeromesh: ${this.router.explain(call.method, call.version, call.where)}`)
        : null,
    })
    this.questions = new Questions({ send: (ep, frames, done) => this.transport.send(ep, frames, done), clock: o.clock })
    this.prover = o.security ? new KeyProver({ credentials: o.security, questions: this.questions, send: (ep, frames, done) => this.transport.send(ep, frames, done), timeout: o.membersTimeout, counts: this.counts }) : null
    this.liveness = new Liveness({
      table: this.table,
      questions: this.questions,
      clock: o.clock,
      timeout: o.membersTimeout,
      counts: this.counts,
      closed: () => this.closing !== null,
      onUp: (ep, reason) => this.connections.up(ep, reason),
    })
    this.services = new ServiceBook({
      questions: this.questions,
      timeout: o.membersTimeout,
      onService: (ep, d, features) => this.connections.served(ep, d, features),
      onNoAnswer: (ep) => this.connections.noServiceAnswer(ep),
    })
    // Every member the lists show is known here; a bounded subset of them, ranked by this
    // client's own random key, is connected (the table).
    this.roster = new Roster({ maxPeers: o.maxPeers, subset: o.subset, key: Math.floor(o.random() * 2 ** 32).toString(36), table: this.table, services: this.services })
    this.seeds = new Set(o.seeds)
    // Member lists and DNS seeds taken in, the subset connected (member-lists.js).
    this.lists = new MemberLists({
      table: this.table,
      roster: this.roster,
      seeds: this.seeds,
      givenSeeds: o.seeds,
      anyHost: o.security !== null, // CURVE, or plain on purpose (security: false)
      maxPeers: o.maxPeers,
      clock: o.clock,
      wallClock: o.wallClock,
      counts: this.counts,
      transport: this.transport,
      connections: this.connections,
      liveness: this.liveness,
      services: this.services,
      routesChanged: () => this.routesChanged(),
      closed: () => this.closing !== null,
    })
    for (const ep of o.seeds) this.connections.add(ep)
    this.discovery = new Discovery({
      questions: this.questions,
      clock: o.clock,
      random: o.random,
      timeout: o.membersTimeout,
      refreshInterval: o.discover ? o.refreshInterval : 0,
      upPeers: () => this.table.up(),
      onList: (list, from) => this.learn(list.members, from),
    })
    this.discovery.start()
    this.dns = dnsSeedsOf(o, (found) => this.lists.onDnsSeeds(found))
    // What members() and describe() use (asks.js).
    this.asking = {
      table: this.table,
      clock: o.clock,
      timeout: o.timeout,
      membersTimeout: o.membersTimeout,
      random: o.random,
      closed: () => this.closing !== null,
      connect: (ep) => this.connections.add(ep),
      fetchList: (ep) => this.discovery.fetch(ep),
    }
    this.dns?.start()
  }

  /** Takes in a member list (MemberLists.learn). */
  learn (members, from) {
    this.lists.learn(members, from)
  }

  /** Something changed what peers may take which request: waiting calls and waitFor() look again. */
  routesChanged () {
    this.methodWaiters.check()
    this.streams.routesChanged()
    this.capacity.routesChanged()
    if (this.parked.size === 0) return
    const parked = [...this.parked]
    this.parked.clear()
    for (const call of parked) this.dispatch(call)
  }

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
   * Sends `method(args)` to a peer and resolves with its result.
   * @param {string} method
   * @param {unknown} [args]
   * @param {{ timeout?: number, idempotent?: boolean, signal?: AbortSignal, key?: string, version?: string, where?: object, headers?: Record<string, string> }} [options]
   */
  request (method, args, options) {
    if (this.middleware.length === 0) return this.send(method, args, options, null)
    const ctx = new CallContext('request', method, args, options)
    return runChain(this.middleware, ctx, () => this.send(ctx.method, ctx.args, ctx.sendOptions(), ctx))
  }

  /** request() past the middleware; `report` (the chain's ctx, or null) learns the peer that answered and the attempts. */
  send (method, args, options, report) {
    let o
    try {
      if (typeof method !== 'string' || method.length === 0 || method.length > 256) {
        throw invalidArgument(`method must be a non-empty string of at most 256 characters, got ${typeof method === 'string' ? JSON.stringify(method) : typeof method}`)
      }
      o = this.requestOptions(options)
    } catch (err) {
      return Promise.reject(err)
    }
    if (this.closing !== null) return Promise.reject(new ClosedError('zeromesh: the client is closed'))
    if (this.pending.size >= this.options.maxPending || this.pendingBytes >= this.options.maxPendingBytes) {
      this.counts.failed.ERR_ZEROMESH_BUSY = (this.counts.failed.ERR_ZEROMESH_BUSY ?? 0) + 1
      const full = this.pending.size >= this.options.maxPending ? `${this.pending.size} requests (maxPending ${this.options.maxPending})` : `${this.pendingBytes} bytes of requests (maxPendingBytes ${this.options.maxPendingBytes})`
      return Promise.reject(new BusyError(`zeromesh: this client already holds ${full}, in flight or waiting for capacity; wait for some to settle`))
    }
    const id = this.nextId
    this.nextId = id === MAX_REQUEST_ID ? 1 : id + 1
    const now = this.clock.now()
    const call = new Call(id, method, args, o, now)
    call.report = report
    if (o.signal?.aborted) {
      call.fail(call.abortError())
      return call.promise
    }
    this.counts.requests++
    this.tracing.start(call)
    if (!this.roster.methods.has(method) && this.roster.called(method)) this.lists.queueResubset() // the subset must hold peers that serve it
    this.budget.deposit(now)
    this.pending.add(call)
    call.deadlineTimer = this.deadlines.add(call, o.timeout, now)
    if (o.signal !== undefined) {
      call.onAbort = () => this.settle(call, call.abortError())
      o.signal.addEventListener('abort', call.onAbort, { once: true })
    }
    this.dispatch(call, now)
    return call.promise
  }

  /**
   * Opens a stream: `method(args)` on a peer whose handler yields items. Returns an async
   * iterable of them (`for await`, `Readable.from`) at once; errors come out of the iteration,
   * each with `items`, how many items arrived. `input`: an (async) iterable of items sent to
   * the handler as `ctx.input` (a request stream). README, Streams.
   * @param {string} method
   * @param {unknown} [args]
   * @param {{ timeout?: number, idleTimeout?: number, window?: { items?: number, bytes?: number }, input?: Iterable<unknown>|AsyncIterable<unknown>, idempotent?: boolean, signal?: AbortSignal, key?: string, version?: string, where?: object, headers?: Record<string, string> }} [options]
   */
  stream (method, args, options) {
    if (this.middleware.length === 0) return this.openStream(method, args, options)
    // The chain is asynchronous and the stream is iterable at once: it opens when the chain
    // reaches next(), and a middleware's error comes out of the iteration.
    const ctx = new CallContext('stream', method, args, options)
    return pendingStream(runChain(this.middleware, ctx, () => this.openStream(ctx.method, ctx.args, ctx.sendOptions())))
  }

  /** stream() past the middleware. */
  openStream (method, args, options) {
    if (typeof method !== 'string' || method.length === 0 || method.length > 256) {
      throw invalidArgument(`method must be a non-empty string of at most 256 characters, got ${typeof method === 'string' ? JSON.stringify(method) : typeof method}`)
    }
    const o = this.streamOptions(options)
    if (this.closing !== null) throw new ClosedError('zeromesh: the client is closed')
    const id = this.nextId
    this.nextId = id === MAX_REQUEST_ID ? 1 : id + 1
    if (!this.roster.methods.has(method) && this.roster.called(method)) this.lists.queueResubset()
    return this.streams.start(id, method, args, o)
  }

  /** Sends the call's next attempt where the call path says (call-path.js), or makes it wait. */
  dispatch (call, now) {
    if (call.settled) return
    const d = this.path.route(call, Kind.REQUEST, now)
    if (d.peer !== undefined) return this.attempts.attempt(call, d.peer, now)
    if (d.park) return this.parked.add(call) // until the routes change (a peer up, a list, a service)
    if (d.capacity) return this.waitForCapacity(call)
    if (d.exhausted) {
      // Every healthy peer refused this call (draining, unreachable): try them all again after
      // a pause that doubles each round, so refusals do not spin.
      call.newRound()
      const pause = Math.min(MAX_ROUND_PAUSE_MS, 5 * 2 ** call.rounds++)
      call.retryTimer = this.clock.setTimeout(() => { call.retryTimer = null; this.dispatch(call) }, pause)
      return
    }
    this.settle(call, d.error)
  }

  /** Every peer that may take `call` refused it busy: it waits for a place, or fails busy now when it cannot start in time. */
  waitForCapacity (call) {
    if (this.capacity.add(call, this.waitingCalls)) return
    this.settle(call, new BusyError(`zeromesh: "${call.method}" cannot start before its deadline: ${this.capacity.size} calls wait ahead of it for the peers' capacity`))
  }

  /**
   * Whether a peer that may take `method` may still come: the client has not had a member
   * list yet, a peer's service is not known yet, a peer that serves it is down for now, or a
   * member outside the subset serves it (which the subset then takes in).
   */
  mayStillRoute (method, version, where) {
    const may = (this.options.discover && this.discovery.known === null) ||
      this.router.mayCome(method, version, where, (digest) => this.services.known(digest)) ||
      this.roster.outsideMayServe(method)
    if (may && this.roster.limited()) this.lists.queueResubset() // a member not connected may serve it: the subset takes it in
    return may
  }

  /** `peer` answered UNKNOWN_METHOD for `method`: it is not sent that again until it says what it serves. */
  notServing (peer, method) {
    ;(peer.notServed ??= new Set()).add(method)
    this.router.changed()
    if (peer.service !== ANY && peer.connected) this.services.ask(peer.endpoint)
  }

  /** A custom strategy's select() threw: reported (userFault), and the error to fail the call with. */
  strategyFault (err) {
    return userFault(this, this.options.logger, 'strategy.select', err)
  }

  onMessage (endpoint, frames) {
    if (frames.length === 0 || !hasSignature(frames[0])) { this.counts.malformed++; return }
    let msg
    let bytes = frames[0].length
    try {
      if (frames.length === 1) msg = decode(frames[0], this.options)
      else { // a reply or stream items with bulk frames after them (PROTOCOL.md 4.2.1, 4.10)
        const bulk = frames.slice(1)
        for (let i = 0; i < bulk.length; i++) bytes += bulk[i].length
        msg = decode(frames[0], this.options, bulk)
      }
    } catch {
      this.counts.malformed++
      return
    }
    const peer = this.table.get(endpoint)
    if (peer === undefined) return
    if (msg.type === MessageType.REPLY) {
      if (typeof msg.meta.load === 'number') { peer.load = msg.meta.load; if (this.zones !== null) peer.loadAt = this.clock.now() }
      this.attempts.onReplies(peer, msg.replies, bytes)
      if (this.options.discover) this.discovery.seen(endpoint, msg.meta.mv)
    } else if (msg.type >= MessageType.STREAM_ITEM && msg.type <= MessageType.STREAM_END) {
      this.streams.onMessage(endpoint, msg, bytes)
    } else if (msg.type === MessageType.MEMBERS) {
      this.discovery.onMembers(endpoint, msg)
    } else if (msg.type === MessageType.SERVICE) {
      this.services.onService(endpoint, msg)
    } else if (msg.type === MessageType.PONG) {
      this.questions.answer(endpoint, msg.seq, msg)
    } else if (msg.type === MessageType.ERROR) {
      if (this.services.onError(endpoint, msg)) return // an older peer: it does not know the question
      // The peer cannot read what we send (another protocol version): nothing was run.
      this.table.setState(peer, 'down', `protocol error from peer: ${msg.message} (peer speaks versions ${msg.minVersion}..${msg.maxVersion})`)
      this.attempts.failOver(peer, true)
    }
  }

  settle (call, err, value) {
    if (call.settled) return
    this.attempts.cancel(call) // peers still working on it (a timed-out or hedged attempt, a deadline, an abort)
    this.pending.delete(call)
    this.pendingBytes -= call.size
    this.parked.delete(call)
    if (call.waiting !== null) this.capacity.delete(call)
    this.attempts.detach(call)
    if (call.deadlineTimer !== null) { this.deadlines.remove(call.deadlineTimer); call.deadlineTimer = null }
    if (call.retryTimer !== null) this.clock.clearTimeout(call.retryTimer)
    if (call.hedgeTimer !== null) this.clock.clearTimeout(call.hedgeTimer)
    if (this.latency !== null) this.latency.observe(this.clock.now() - (call.deadline - call.timeout))
    if (call.span !== null) this.tracing.end(call, err)
    if (call.report !== null) { call.report.peer = call.repliedBy; call.report.attempts = call.attempts }
    if (err === null) {
      this.counts.ok++
      call.succeed(value)
    } else {
      this.counts.failed[err.code] = (this.counts.failed[err.code] ?? 0) + 1
      call.fail(err)
    }
  }

  /** The peers this client knows, with their state as this client sees it. */
  peers () {
    return this.table.snapshot()
  }

  /** Counters: requests, successes, retries, attempt timeouts, retries refused by the budget, failures by code, member lists fetched. */
  stats () {
    return { ...this.counts, failed: { ...this.counts.failed }, inflight: this.pending.size, waiting: this.capacity.size, waited: this.capacity.counts.waited, memberLists: this.discovery.counts.lists, memberFetches: this.discovery.counts.fetches }
  }

  /**
   * A peer's view of the cluster (`from`, or a random up peer): resolves with
   * [{ endpoint, state, incarnation, meta }], as that peer's `members()` shows it.
   */
  members (from) {
    return askMembers(this.asking, from)
  }

  /**
   * Resolves once some peer that is up serves `method` (and matches `version` and `where`,
   * as a request's options would), with the endpoints of those peers. Rejects with
   * TimeoutError after `timeout` (the client's by default), ClosedError when the client closes.
   * @param {string} method
   * @param {{ timeout?: number, version?: string, where?: object }} [options]
   */
  waitFor (method, options) {
    if (this.closing !== null) return Promise.reject(new ClosedError('zeromesh: the client is closed'))
    return this.methodWaiters.add(method, options)
  }

  /**
   * A typed client of `contract` (contract()): a function per method, taking its input and
   * resolving to its output (a stream method's items as an async iterable), with the usual
   * request or stream options. Inputs are checked here before they are sent.
   * @param {object} contract
   * @param {{ validateInput?: boolean, validateOutput?: boolean }} [options]
   */
  service (contract, options) {
    return serviceClient(contract, { request: (m, a, o) => this.request(m, a, o), stream: (m, a, o) => this.stream(m, a, o) }, options)
  }

  /**
   * What the peer at `endpoint` serves, asked of it (it is connected if it was not):
   * { methods, version, labels, capacity }, or 'any' for a peer older than services.
   * Rejects with TimeoutError when it does not say within the client's timeout.
   */
  describe (endpoint) {
    return askService(this.asking, endpoint)
  }

  /** Rejects every pending request with ClosedError and closes the socket. */
  close () {
    if (this.closing !== null) return this.closing
    const err = new ClosedError('zeromesh: the client was closed')
    this.closing = (async () => {
      this.discovery.stop()
      for (const peer of this.table.entries.values()) this.liveness.stop(peer)
      this.questions.stop()
      this.dns?.stop()
      for (const call of this.pending.values()) this.settle(call, err)
      this.streams.close(err)
      this.capacity.clear() // emptied already: every request and stream waiting was failed above
      this.methodWaiters.close(err)
      this.deadlines.clear()
      this.attempts.close()
      await this.transport.close()
    })()
    return this.closing
  }
}

