// The embeddable client: keeps a table of peers, picks one per request through the
// strategy, sends, and fails over. No promise outlives its deadline.
import { EventEmitter } from 'node:events'
import { ZmqConnector } from '../transport/zmq-connector.js'
import { Outbox } from '../transport/outbox.js'
import { PeerTable } from './peer-table.js'
import { resolveClientOptions, requestOptionsChecker, streamOptionsChecker } from './options.js'
import { ClientStreams } from './streams.js'
import { resolveStrategy } from './strategies/index.js'
import { Call } from './call.js'
import { IdTable } from '../protocol/id-table.js'
import { Discovery } from './discovery.js'
import { ServiceBook, ANY } from './services.js'
import { Questions } from './questions.js'
import { KeyProver } from './key-prover.js'
import { handshakeRefusal, allRefused, refusalError } from './refusals.js'
import { Liveness } from './liveness.js'
import { Router } from './routing.js'
import { ZonePreference } from './zone.js'
import { Roster } from './roster.js'
import { MethodWaiters } from './method-waiters.js'
import { pickByKey } from './strategies/rendezvous.js'
import { RetryBudget } from './retry-budget.js'
import { PeakEwma } from './peak-ewma.js'
import { decide, Outcome } from './failover.js'
import { Ejector } from './ejection.js'
import { TimerLists } from './timer-lists.js'
import { ClientTracing } from './tracing.js'
import { MemberLists } from './member-lists.js'
import { encodeRequest, encodeCancel, decode, hasSignature, packEntry, requestFrame, FRAME_OVERHEAD } from '../protocol/codec.js'
import { MessageType, Status, Feature, memberStateNames, MAX_REQUEST_ID, Limits } from '../protocol/constants.js'
import {
  ClosedError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError,
  DrainingError, ProtocolError, invalidArgument,
} from '../protocol/errors.js'
import { normalizeRemote, isLoopback } from '../protocol/endpoint.js'
import { userFault, safeEmit, safeLogger } from '../protocol/user-code.js'
import { SILENT_LOGGER } from '../protocol/options.js'
import { dnsSeedsOf } from '../transport/dns-seeds.js'

const MAX_ROUND_PAUSE_MS = 200 // longest pause before trying again peers that all refused
const LOST_GRACE_MS = 50 //       time for replies already received to be read after a disconnect
const LATENCY_DECAY_MS = 10000 // how fast a method's latency estimate forgets a slow spell

function stateName (n) {
  return memberStateNames[n] ?? 'unknown'
}

export class Client extends EventEmitter {
  /** @param {object} options  ClientOptions (index.d.ts; README, API) */
  constructor (options) {
    super()
    const o = resolveClientOptions(options)
    o.logger = safeLogger(o.logger, (level, err) => userFault(this, SILENT_LOGGER, `the logger's ${level}()`, err))
    this.options = o
    this.requestOptions = requestOptionsChecker(o)
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
    this.methodWaiters = new MethodWaiters({ router: this.router, clock: o.clock, timeout: o.timeout, where: o.where })
    this.ejector = new Ejector({ table: this.table, clock: o.clock, ...o.ejection })
    this.pending = new IdTable() // id -> Call (why not a Map: id-table.js)
    this.streams = new ClientStreams(this) // client.stream(): open streams, by id (ids shared with requests)
    this.parked = new Set() //  calls waiting for any peer to come up
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
    this.methodLatency = new Map() // method -> PeakEwma, for adaptive attempt timeouts
    this.latency = null // a LatencyHistogram (ops/metrics.js) once metrics are on: each request's whole time
    this.tracing = new ClientTracing() // CLIENT spans, when a tracer provider is registered
    this.deadlines = new TimerLists(o.clock, (call) => this.onDeadline(call))
    this.attemptLimits = new TimerLists(o.clock, (call) => this.onAttemptTimeout(call))
    // Requests for one peer made in the same turn leave together (coalescing); each in a frame
    // still fails over on its own.
    this.outbox = new Outbox({
      send: (peer, entries, calls) => this.transport.send(peer.endpoint, [requestFrame(entries)], (code) => { for (const c of calls) this.onSent(c, peer, code) }),
      keep: (call, peer) => !call.settled && call.peer === peer, // not aborted or moved on before it left
      maxBatch: Limits.maxBatch, // what a peer accepts by default
      maxBytes: o.maxMessageSize,
      overhead: FRAME_OVERHEAD,
      early: true,
    })
    const makeTransport = o.transport ?? ((t) => new ZmqConnector(t))
    this.transport = makeTransport({
      maxMessageSize: o.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval,
      heartbeatTimeout: o.heartbeatTimeout,
      onMessage: (ep, frames) => this.onMessage(ep, frames),
      onUp: (ep) => this.onUp(ep),
      onDown: (ep) => this.onDown(ep, 'disconnected'),
      credentials: o.security || null,
      onRefused: (ep, refusal) => this.onRefused(ep, refusal),
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
      onUp: (ep, reason) => this.onUp(ep, reason),
    })
    this.services = new ServiceBook({
      questions: this.questions,
      timeout: o.membersTimeout,
      onService: (ep, d, features) => this.onService(ep, d, features),
      onNoAnswer: (ep) => this.onNoServiceAnswer(ep),
    })
    // Every member the lists show is known here; a bounded subset of them, ranked by this
    // client's own random key, is connected (the table).
    this.roster = new Roster({ maxPeers: o.maxPeers, subset: o.subset, key: Math.floor(o.random() * 2 ** 32).toString(36), table: this.table, services: this.services })
    this.seeds = new Set(o.seeds)
    this.lists = new MemberLists(this) // member lists and DNS seeds taken in, the subset connected (member-lists.js)
    for (const ep of o.seeds) this.addPeer(ep)
    this.discovery = new Discovery({
      send: (ep, frames, done) => this.transport.send(ep, frames, done),
      clock: o.clock,
      random: o.random,
      timeout: o.membersTimeout,
      refreshInterval: o.discover ? o.refreshInterval : 0,
      upPeers: () => this.table.up(),
      onList: (list) => this.learn(list.members),
    })
    this.discovery.start()
    this.dns = dnsSeedsOf(o, (found) => this.lists.onDnsSeeds(found))
    this.dns?.start()
  }

  /** Takes in a member list (MemberLists.learn). */
  learn (members) {
    this.lists.learn(members)
  }

  /** Connects to a peer and adds it to the table; undefined when refused (off loopback for a plain client, or by ZeroMQ). */
  addPeer (endpoint) {
    if (this.options.security === null && !isLoopback(endpoint)) { this.counts.offLoopback++; return undefined }
    if (this.transport.connect(endpoint) === false) { this.counts.peersRefused++; return undefined }
    return this.table.add(endpoint)
  }

  /** `endpoint` said what it serves (a descriptor, or ANY for an older peer), and what it can do (`features`). */
  onService (endpoint, d, features = 0) {
    const peer = this.table.get(endpoint)
    if (peer === undefined || this.closing !== null) return
    peer.service = d
    peer.streams = (features & Feature.STREAMS) !== 0
    peer.notServed = null
    if (d !== ANY) peer.hint = d.digest
    this.router.changed()
    this.routesChanged()
  }

  /**
   * A connected peer did not answer what it serves within membersTimeout: it may be one that
   * predates the question and drops frames it does not know (PROTOCOL.md asks for an ERROR,
   * not every implementation sends one). It is taken to serve anything, as an older peer is;
   * an UNKNOWN_METHOD answer, a new claim or a reconnection makes the client ask again.
   */
  onNoServiceAnswer (endpoint) {
    const peer = this.table.get(endpoint)
    if (peer === undefined || !peer.connected || peer.service !== null || this.closing !== null) return
    this.onService(endpoint, ANY)
  }

  /** Something changed what peers may take which request: waiting calls and waitFor() look again. */
  routesChanged () {
    this.methodWaiters.check()
    this.streams.routesChanged()
    if (this.parked.size === 0) return
    const parked = [...this.parked]
    this.parked.clear()
    for (const call of parked) this.dispatch(call)
  }

  removePeer (peer) {
    this.liveness.stop(peer)
    this.failOver(peer, false)
    this.table.remove(peer)
    this.discovery.forget(peer.endpoint)
    this.questions.forget(peer.endpoint)
    this.transport.disconnect(peer.endpoint)
  }

  /**
   * Sends `method(args)` to a peer and resolves with its result.
   * @param {string} method
   * @param {unknown} [args]
   * @param {{ timeout?: number, idempotent?: boolean, signal?: AbortSignal, key?: string, version?: string, where?: object }} [options]
   */
  request (method, args, options) {
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
    if (this.pending.size >= this.options.maxPending) {
      this.counts.failed.ERR_ZEROMESH_BUSY = (this.counts.failed.ERR_ZEROMESH_BUSY ?? 0) + 1
      return Promise.reject(new BusyError(`zeromesh: ${this.pending.size} requests already in flight in this client (maxPending ${this.options.maxPending}); wait for some to settle`))
    }
    const id = this.nextId
    this.nextId = id === MAX_REQUEST_ID ? 1 : id + 1
    const now = this.clock.now()
    const call = new Call(id, method, args, o, now)
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
   * @param {{ timeout?: number, idleTimeout?: number, window?: { items?: number, bytes?: number }, input?: Iterable<unknown>|AsyncIterable<unknown>, idempotent?: boolean, signal?: AbortSignal, key?: string, version?: string, where?: object }} [options]
   */
  stream (method, args, options) {
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

  /** Picks a peer for the call's next attempt, or parks the call until one is up. */
  dispatch (call, now) {
    if (call.settled) return
    const up = this.table.up()
    if (up.length === 0) {
      // Every peer refused this client at the handshake: waiting would not help.
      if (allRefused(this.table)) return this.settle(call, refusalError(this.table))
      this.dns?.refresh() // nothing reachable: the names may point elsewhere now
      this.lists.restoreSeeds()
      this.parked.add(call)
      return
    }
    const routed = this.router.candidates(call.method, call.version, call.where)
    if (routed.length === 0) return this.unroutable(call)
    const candidates = call.tried.length === 0 ? routed : routed.filter((e) => !call.tried.includes(e.endpoint))
    if (candidates.length === 0) {
      // Every healthy peer refused this call (busy, draining, unreachable): try them all
      // again after a pause that doubles each round, so refusals do not spin.
      call.newRound()
      const pause = Math.min(MAX_ROUND_PAUSE_MS, 5 * 2 ** call.rounds++)
      call.retryTimer = this.clock.setTimeout(() => { call.retryTimer = null; this.dispatch(call) }, pause)
      return
    }
    let peer
    if (call.key !== undefined) {
      peer = pickByKey(candidates, call.key)
    } else {
      const pool = this.zones === null ? candidates : this.zones.narrow(call.method, candidates, now ?? this.clock.now())
      try {
        peer = this.strategy.select(pool, call)
      } catch (err) {
        return this.settle(call, this.strategyFault(err))
      }
      if (!pool.includes(peer)) peer = pool[0] // a custom strategy returned something else
    }
    this.attempt(call, peer, now)
  }

  /**
   * No peer up may take the call (none serves its method, or matches its version and
   * labels). It waits while one may still come (the client has not had a member list yet, a
   * peer's service is not known yet, or a peer that serves it is down for now), until its
   * deadline; otherwise it fails at once with an UnknownMethodError that says what is served.
   */
  unroutable (call) {
    if (this.mayStillRoute(call.method, call.version, call.where)) {
      this.parked.add(call)
      return
    }
    const err = new UnknownMethodError(`zeromesh: ${this.router.explain(call.method, call.version, call.where)}`)
    this.settle(call, err)
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

  attempt (call, peer, now = this.clock.now()) {
    const remaining = Math.max(1, Math.ceil(call.deadline - now))
    // A lone request is packed as its whole frame, to leave at once as it is; any other as an
    // entry, to be joined with the others of this turn (transport/outbox.js).
    const lone = this.outbox.lone(peer, peer.calls.size)
    const entry = call.trace === null ? [call.id, call.method, call.args, remaining] : [call.id, call.method, call.args, remaining, call.trace]
    let packed
    try {
      packed = lone ? encodeRequest([entry]) : packEntry(entry)
    } catch (err) {
      return this.settle(call, invalidArgument(`args of "${call.method}" could not be encoded: ${err?.message ?? err}`))
    }
    const size = lone ? packed.length : FRAME_OVERHEAD + packed.length
    if (size > this.options.maxMessageSize) {
      return this.settle(call, invalidArgument(`request "${call.method}" is ${size} bytes, larger than maxMessageSize ${this.options.maxMessageSize}`))
    }
    if (call.attempts > 0) this.counts.retries++
    call.attempts++
    call.sentTo(peer.endpoint)
    if (call.span !== null) this.tracing.attempt(call, peer.endpoint, false)
    call.peer = peer
    call.sent = false
    call.sentAt = now
    peer.calls.add(call)
    const limit = this.attemptTimeoutFor(call, remaining)
    if (limit !== null) call.attemptTimer = this.attemptLimits.add(call, limit, now)
    if (call.hedge !== null && call.idempotent && call.attempts === 1) {
      call.hedgeTimer = this.clock.setTimeout(() => this.hedge(call), call.hedge.delayMs)
    }
    if (lone) {
      this.transport.send(peer.endpoint, [packed], (code) => this.onSent(call, peer, code))
      return
    }
    this.outbox.add(peer, peer, packed, call, peer.calls.size)
  }

  /**
   * A second copy of a slow idempotent request, to a peer it has not tried, `hedge.delayMs`
   * after the first: the first answer wins and the other copy is cancelled (see settle). A
   * hedge uses the retry budget; it is not tied to its peer, so losing that peer
   * changes nothing for the request.
   */
  hedge (call) {
    call.hedgeTimer = null
    if (call.settled) return
    const candidates = this.router.candidates(call.method, call.version, call.where).filter((e) => !call.tried.includes(e.endpoint))
    if (candidates.length === 0 || !this.budget.withdraw()) return
    let peer
    try {
      peer = call.key !== undefined ? pickByKey(candidates, call.key) : this.strategy.select(candidates, call)
    } catch (err) {
      userFault(this, this.options.logger, 'strategy.select', err)
      return
    }
    if (!candidates.includes(peer)) return
    const remaining = Math.max(1, Math.ceil(call.deadline - this.clock.now()))
    let frame
    try { frame = encodeRequest([call.trace === null ? [call.id, call.method, call.args, remaining] : [call.id, call.method, call.args, remaining, call.trace]]) } catch { return }
    call.sentTo(peer.endpoint)
    if (call.span !== null) this.tracing.attempt(call, peer.endpoint, true)
    this.counts.hedges++
    this.transport.send(peer.endpoint, [frame], () => {})
  }

  /**
   * How long this attempt may take before another peer is tried: the request's
   * `attemptTimeout`, or with 'auto' 4x the method's peak-EWMA latency + 50 ms (at least
   * 100 ms). Null (no attempt limit: the whole deadline) for non-idempotent requests, which
   * are not retried after a timeout anyway, for methods never measured, and when the limit
   * would not come before the deadline.
   */
  attemptTimeoutFor (call, remaining) {
    if (!call.idempotent) return null
    let limit = call.attemptTimeout
    if (limit === 'auto') {
      const est = this.methodLatency.get(call.method)?.value
      if (est == null) return null
      limit = Math.max(100, Math.ceil((4 * est + 50) / 10) * 10) // 10 ms steps: few distinct timer lists
    }
    return limit < remaining ? limit : null
  }

  onAttemptTimeout (call) {
    call.attemptTimer = null
    const peer = call.peer // the attempt's: a new attempt or a detach removes the limit
    if (call.settled || peer === null) return
    this.counts.attemptTimeouts++
    const now = this.clock.now()
    const latencyMs = now - call.sentAt
    this.table.recordFailure(peer, `attempt timed out after ${Math.round(latencyMs)} ms`, latencyMs, now)
    this.strategyResult(peer, { latencyMs, error: 'timeout', at: now })
    if (this.ejector.failure(peer)) this.counts.ejections++
    this.retryOrFail(call, Outcome.ATTEMPT_TIMEOUT, peer)
  }

  /** Applies the failover policy (client/failover.js) to a call whose attempt on `peer` ended. */
  retryOrFail (call, outcome, peer) {
    const d = decide(call, outcome, { maxAttempts: this.options.maxAttempts, budget: this.budget, random: this.options.random, endpoint: peer.endpoint })
    if (call.budgetSpent) { call.budgetSpent = false; this.counts.budgetExhausted++ }
    if (d.action === 'fail') return this.settle(call, d.error)
    if (d.action === 'wait') return
    if (outcome !== Outcome.REFUSED) call.lost = true // the earlier attempt may still answer, or may have run
    this.detach(call)
    if (d.delay === 0) return this.dispatch(call)
    call.retryTimer = this.clock.setTimeout(() => { call.retryTimer = null; this.dispatch(call) }, d.delay)
  }

  onSent (call, peer, code) {
    if (code === null) { call.sent = true; return }
    if (call.settled || call.peer !== peer) return
    // ZeroMQ refused the message: the peer certainly never saw it, so go elsewhere at once.
    this.detach(call)
    if (code === 'EHOSTUNREACH') {
      this.table.setState(peer, 'down', 'unreachable')
    } else {
      this.table.recordFailure(peer, `send failed: ${code}`)
      if (this.ejector.failure(peer)) this.counts.ejections++
    }
    call.lastError = new NoPeersError(`zeromesh: could not send "${call.method}" to ${peer.endpoint} (${code})`)
    this.retryOrFail(call, Outcome.REFUSED, peer)
  }

  onMessage (endpoint, frames) {
    if (frames.length !== 1 || !hasSignature(frames[0])) { this.counts.malformed++; return }
    let msg
    try {
      msg = decode(frames[0], this.options)
    } catch {
      this.counts.malformed++
      return
    }
    const peer = this.table.get(endpoint)
    if (peer === undefined) return
    if (msg.type === MessageType.REPLY) {
      if (typeof msg.meta.load === 'number') { peer.load = msg.meta.load; if (this.zones !== null) peer.loadAt = this.clock.now() }
      if (msg.replies.length > 1) this.outbox.hold(peer, peer) // the callers it wakes send in one frame
      for (const r of msg.replies) this.onReply(peer, r)
      if (this.options.discover) this.discovery.seen(endpoint, msg.meta.mv)
    } else if (msg.type >= MessageType.STREAM_ITEM && msg.type <= MessageType.STREAM_END) {
      this.streams.onMessage(endpoint, msg, frames[0].length)
    } else if (msg.type === MessageType.MEMBERS) {
      this.discovery.onMembers(msg)
    } else if (msg.type === MessageType.SERVICE) {
      this.services.onService(endpoint, msg)
    } else if (msg.type === MessageType.PONG) {
      this.questions.answer(endpoint, msg.seq, msg)
    } else if (msg.type === MessageType.ERROR) {
      if (this.services.onError(endpoint, msg)) return // an older peer: it does not know the question
      // The peer cannot read what we send (another protocol version): nothing was run.
      this.table.setState(peer, 'down', `protocol error from peer: ${msg.message} (peer speaks versions ${msg.minVersion}..${msg.maxVersion})`)
      this.failOver(peer, true)
    }
  }

  onReply (peer, r) {
    const call = this.pending.get(r.id)
    if (call === undefined) return // late: timed out, aborted or answered by another peer
    call.answeredBy(peer.endpoint)
    if (call.span !== null) this.tracing.reply(call, peer.endpoint, r.status)
    switch (r.status) {
      case Status.OK:
        this.measured(call, peer, null)
        return this.settle(call, null, r.value)
      case Status.UNKNOWN_METHOD:
        // The handler never ran: the client's idea of what this peer serves was wrong (the
        // peer stopped serving it, or is older and never said). Go to a peer that serves it,
        // idempotent or not, and ask this one again what it serves.
        if (call.peer !== peer) return
        this.detach(call)
        this.notServing(peer, call.method)
        call.lastError = new UnknownMethodError(r.message)
        return this.retryOrFail(call, Outcome.REFUSED, peer)
      case Status.REMOTE: {
        const err = new RemoteError(r.message, { remoteCode: r.code })
        this.measured(call, peer, err)
        return this.settle(call, err)
      }
      case Status.INVALID_REQUEST:
        return this.settle(call, invalidArgument(`peer ${peer.endpoint} refused the request: ${r.message}`))
      case Status.BUSY:
      case Status.DRAINING:
        if (call.peer !== peer) return
        this.detach(call)
        if (r.status === Status.DRAINING) {
          peer.listedGone = false // the peer itself says it is stopping: only a reconnect brings it back
          this.table.setState(peer, 'draining', 'draining')
          call.lastError = new DrainingError(`zeromesh: every peer tried was draining (last: ${peer.endpoint})`)
        } else {
          this.table.recordFailure(peer, 'busy')
          call.lastError = new BusyError(`zeromesh: every peer tried was busy (last: ${peer.endpoint}: ${r.message})`)
        }
        return this.retryOrFail(call, Outcome.REFUSED, peer)
      default:
        return this.settle(call, new ProtocolError(`zeromesh: peer ${peer.endpoint} answered with unknown status ${r.status}`))
    }
  }

  /** The strategy hears how an attempt ended; what it throws is reported, not thrown. */
  strategyResult (peer, result) {
    if (this.strategy.onResult === undefined) return
    try {
      this.strategy.onResult(peer, result)
    } catch (err) {
      userFault(this, this.options.logger, 'strategy.onResult', err)
    }
  }

  /** An answer came from `peer`: its latency goes to the table and to the strategy. */
  measured (call, peer, error) {
    if (call.peer !== peer) return // an earlier attempt's answer: its timing is not this one's
    const now = this.clock.now()
    const latencyMs = now - call.sentAt
    this.table.recordSuccess(peer, latencyMs, now)
    this.ejector.success(peer)
    this.strategyResult(peer, { latencyMs, error, at: now })
    let m = this.methodLatency.get(call.method)
    if (m === undefined) this.methodLatency.set(call.method, m = new PeakEwma(LATENCY_DECAY_MS))
    m.add(latencyMs, now)
  }

  onUp (endpoint, reason = null) {
    const peer = this.table.get(endpoint)
    if (peer === undefined) return
    peer.connected = true
    peer.refusal = null
    peer.handshakeFailures = 0
    peer.listedGone = false
    peer.failures = 0
    if (reason === null) {
      this.services.ask(endpoint) // a (re)connection: it may serve something else now
      this.prover?.prove(endpoint) // ...and does not know this client's key yet
    }
    this.table.setState(peer, 'up', reason)
    if (this.options.discover) this.discovery.peerUp(endpoint)
    this.routesChanged()
  }

  /** A handshake with `endpoint` failed: once every known peer has refused, waiting requests fail (refusals.js). */
  onRefused (endpoint, failure) {
    const peer = this.table.get(endpoint)
    if (peer === undefined) return
    const refusal = handshakeRefusal(peer, failure, this.options.security)
    if (refusal === null) return
    peer.refusal = refusal
    this.options.logger.warn({ peer: endpoint, kind: failure.kind, code: failure.code }, `handshake refused: ${refusal.message.replace(/^zeromesh: /, '')}`)
    peer.lastError = refusal.message
    if (allRefused(this.table)) {
      const err = refusalError(this.table)
      const parked = [...this.parked]
      this.parked.clear()
      for (const call of parked) this.settle(call, err)
    }
  }

  onDown (endpoint, reason) {
    const peer = this.table.get(endpoint)
    if (peer === undefined) return
    peer.connected = false
    this.questions.forget(endpoint)
    this.ejector.reset(peer)
    this.table.setState(peer, 'down', reason)
    if (peer.gone) return this.removePeer(peer)
    this.failOver(peer, false)
    this.liveness.checkDown(peer) // a late event of an old connection may have said so
  }

  /**
   * Moves the calls in flight on `peer` elsewhere. When the peer certainly did not run them
   * (`notTaken`) every call moves at once. Otherwise the connection was lost: replies that
   * arrived before it dropped may still be waiting to be read (ZeroMQ reports the disconnect
   * on another path than the messages), so each call gets LOST_GRACE_MS for its reply; then
   * the failover policy decides (an idempotent call moves to another peer; any other fails
   * with ConnectionLostError because it may or may not have run).
   */
  failOver (peer, notTaken) {
    this.streams.peerLost(peer, notTaken)
    for (const call of [...peer.calls]) {
      this.detach(call)
      if (notTaken) {
        call.lastError ??= new NoPeersError(`zeromesh: ${peer.endpoint} cannot take "${call.method}" (${peer.lastError})`)
        this.retryOrFail(call, Outcome.REFUSED, peer)
        continue
      }
      call.lost = true
      call.retryTimer = this.clock.setTimeout(() => {
        call.retryTimer = null
        if (!call.settled) this.retryOrFail(call, Outcome.LOST, peer)
      }, LOST_GRACE_MS)
    }
  }

  detach (call) {
    const peer = call.peer
    if (peer !== null) {
      peer.calls.delete(call)
      call.peer = null
      if (peer.retiring && peer.calls.size === 0) setImmediate(() => { if (peer.retiring && peer.calls.size === 0) this.removePeer(peer) })
    }
    if (call.attemptTimer !== null) {
      this.attemptLimits.remove(call.attemptTimer)
      call.attemptTimer = null
    }
  }

  onDeadline (call) {
    call.deadlineTimer = null
    const ms = call.timeout
    let err
    if ((call.peer !== null && call.sent) || call.lost) {
      // An attempt is out, or was lost in flight: the request may have run, no reply came.
      err = new TimeoutError(`zeromesh: "${call.method}" got no reply within ${ms} ms (${call.attempts} attempt${call.attempts === 1 ? '' : 's'})`)
    } else if (call.lastError !== null) {
      err = call.lastError
    } else if ([...this.table.entries.values()].some((p) => p.refusal !== null)) {
      err = refusalError(this.table) // some refused, the others never answered
    } else if (!this.table.anyEverUp()) {
      err = new NoPeersError(`zeromesh: no peer reachable within ${ms} ms (tried ${[...this.table.entries.keys()].join(', ')})`)
    } else if (this.router.candidates(call.method, call.version, call.where).length === 0 && !this.router.mayCome(call.method, call.version, call.where, (d) => this.services.known(d))) {
      err = new UnknownMethodError(`zeromesh: ${this.router.explain(call.method, call.version, call.where)}`)
    } else {
      err = new NoPeersError(`zeromesh: no peer was up for "${call.method}" within ${ms} ms`)
    }
    this.settle(call, err)
  }

  settle (call, err, value) {
    if (call.settled) return
    // Peers still working on it (a timed-out or hedged attempt, a deadline, an abort) are
    // told to drop it: their handler's ctx.signal aborts.
    for (const ep of call.outstanding) {
      if (this.table.get(ep)?.state === 'down') continue
      this.transport.send(ep, [encodeCancel([call.id])], () => {})
    }
    this.pending.delete(call)
    this.parked.delete(call)
    this.detach(call)
    if (call.deadlineTimer !== null) { this.deadlines.remove(call.deadlineTimer); call.deadlineTimer = null }
    if (call.retryTimer !== null) this.clock.clearTimeout(call.retryTimer)
    if (call.hedgeTimer !== null) this.clock.clearTimeout(call.hedgeTimer)
    if (this.latency !== null) this.latency.observe(this.clock.now() - (call.deadline - call.timeout))
    if (call.span !== null) this.tracing.end(call, err)
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
    return { ...this.counts, failed: { ...this.counts.failed }, inflight: this.pending.size, memberLists: this.discovery.counts.lists, memberFetches: this.discovery.counts.fetches }
  }

  /**
   * A peer's view of the cluster (`from`, or a random up peer): resolves with
   * [{ endpoint, state, incarnation, meta }], as that peer's `members()` shows it.
   */
  async members (from) {
    if (this.closing !== null) throw new ClosedError('zeromesh: the client is closed')
    let endpoint
    if (from === undefined) {
      await this.until(() => this.table.up().length > 0 || allRefused(this.table))
      const up = this.table.up()
      if (up.length === 0 && allRefused(this.table)) throw refusalError(this.table)
      if (up.length === 0) throw new NoPeersError(`zeromesh: no peer reachable within ${this.options.timeout} ms to ask for members`)
      endpoint = up[Math.floor(this.options.random() * up.length)].endpoint
    } else {
      endpoint = normalizeRemote(from, 'from')
      if (this.table.get(endpoint) === undefined && this.addPeer(endpoint) === undefined) throw new NoPeersError(`zeromesh: cannot connect to ${endpoint}`)
      await this.until(() => this.table.get(endpoint)?.state === 'up' || this.table.get(endpoint)?.refusal != null)
      const refusal = this.table.get(endpoint)?.refusal
      if (refusal != null && this.table.get(endpoint)?.state !== 'up') throw refusal
      if (this.table.get(endpoint)?.state !== 'up') throw new NoPeersError(`zeromesh: ${endpoint} not reachable within ${this.options.timeout} ms`)
    }
    const list = await this.discovery.fetch(endpoint)
    if (list === null) throw new TimeoutError(`zeromesh: ${endpoint} sent no member list within ${this.options.membersTimeout} ms`)
    return list.members.map((m) => ({ endpoint: m.endpoint, state: stateName(m.state), incarnation: m.incarnation, meta: m.meta, service: m.service ?? null }))
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
   * What the peer at `endpoint` serves, asked of it (it is connected if it was not):
   * { methods, version, labels, capacity }, or 'any' for a peer older than services.
   * Rejects with TimeoutError when it does not say within the client's timeout.
   */
  async describe (endpoint) {
    if (this.closing !== null) throw new ClosedError('zeromesh: the client is closed')
    const ep = normalizeRemote(endpoint, 'endpoint')
    if (this.table.get(ep) === undefined && this.addPeer(ep) === undefined) throw new NoPeersError(`zeromesh: cannot connect to ${ep}`)
    await this.until(() => this.table.get(ep)?.service != null || this.table.get(ep)?.refusal != null)
    const peer = this.table.get(ep)
    if (peer?.service == null) throw peer?.refusal ?? new TimeoutError(`zeromesh: ${ep} did not say what it serves within ${this.options.timeout} ms`)
    return peer.snapshot().service
  }

  /** Resolves once `cond()` holds, the client's timeout passes, or the client closes. */
  async until (cond) {
    const deadline = this.clock.now() + this.options.timeout
    while (!cond() && this.clock.now() < deadline && this.closing === null) {
      await new Promise((resolve) => this.clock.setTimeout(resolve, 10))
    }
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
      this.methodWaiters.close(err)
      this.deadlines.clear()
      this.attemptLimits.clear()
      await this.transport.close()
    })()
    return this.closing
  }
}
