// The one lifecycle of every call, whatever its kind (as Finagle has one stack for every
// protocol): started, routed (call-path.js), attempted, answered, refused, timed out or lost,
// decided by the failover policy (failover.js), and settled, once. Refusals, deadlines,
// aborts, waiting for capacity, hedges, attempt limits and counters are written here and
// nowhere else. A kind (entry-calls.js for requests and events, streams.js) says only how an
// attempt leaves and how the answers that come back read: it packs and sends, and it reports
// what came back through ended(), refused(), fail() and the like. The attempt limit's
// arithmetic (attempt-limit.js) and the failover decision (failover.js) are pure functions.
//
// A kind is an object with:
//   noun           'request', 'stream': how errors name a call of it
//   needs          the Feature bits (protocol/constants.js) a peer must state to take it
//   measures       whether its answers time the peer (p2c, adaptive attempt timeouts)
//   long           whether a call of it may stay open long (a stream): it is held on its peer's
//                  `open` list, not `calls`, so it counts neither as the peer's outstanding load
//                  (p2c) nor against a lone request's fast path
//   counts         { started, ok, failed }
//   pack(call, peer, remaining)  the attempt's bytes, ready to send; throws a coded error
//                  when it cannot be encoded or is too large (the call fails, unsent)
//   send(call, peer, packed)     sends them; ZeroMQ's verdict comes back through sent()
//   copy(call, peer, remaining)  a hedged copy, sent at once; false when none could be made
//   timedOut(call) the error of a call whose deadline passed while a peer had it
//   unroutable(message)  the error of a call no peer may ever take (UnknownMethodError for a
//                  method; an event waits for a subscriber instead: its `waits`)
//   deliver(call, err, value)    hands the outcome to the caller (err null: value)
//   detached(call) the current attempt is over (its sender, if it keeps one, can go)
import { IdTable } from '../runtime/id-table.js'
import { TimerLists } from './timer-lists.js'
import { msLeft } from './deadline.js'
import { PeakEwma } from './peak-ewma.js'
import { decide, Outcome } from './failover.js'
import { attemptLimit, queuedLimit, answering, nextStep, queuedWaves } from './attempt-limit.js'
import { refusalError } from './refusals.js'
import { encodeCancel } from '../protocol/codec.js'
import { Status } from '../protocol/constants.js'
import { begun, settled } from '../runtime/diagnostics.js'
import {
  NoPeersError, UnknownMethodError, BusyError, DrainingError, ProtocolError, ConnectionLostError,
  RemoteCode, remoteError, invalidArgument,
} from '../protocol/errors.js'

const LOST_GRACE_MS = 50 //       time for answers already received to be read after a disconnect
const LATENCY_DECAY_MS = 10000 // how fast a method's latency estimate forgets a slow spell
const MAX_ROUND_PAUSE_MS = 200 // longest pause before trying again peers that all refused

export class Calls {
  /**
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {import('./call-path.js').CallPath} o.path         where each attempt goes
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {import('./capacity.js').CapacityWait} o.capacity  busy peers, and the calls that wait for them
   * @param {import('./retry-budget.js').RetryBudget} o.budget
   * @param {import('./ejection.js').Ejector} o.ejector
   * @param {{ onResult?: Function }} o.strategy   told how each attempt ended
   * @param {import('./tracing.js').ClientTracing} o.tracing
   * @param {number} o.maxAttempts
   * @param {number} o.maxPending       calls at once, in flight or waiting
   * @param {number} o.maxPendingBytes  their bytes, as encoded
   * @param {() => number} o.random
   * @param {(ep: string, frames: Buffer[], done: Function) => void} o.send  the connector's send (cancels)
   * @param {(peer, method: string) => void} o.notServing  a peer answered UNKNOWN_METHOD
   * @param {(peer) => void} o.retired      a peer left out of the subset has no calls left
   * @param {(what: string, err: unknown) => void} o.userFault  user code threw
   * @param {(call) => Error|null} o.unroutable  why no peer may ever take the call, or null
   */
  constructor (o) {
    this.o = o
    this.clock = o.clock
    this.pending = new IdTable() // id -> Call, every kind (why not a Map: id-table.js)
    this.parked = new Set() //      calls waiting for any peer that may take them to come up
    this.onSettled = null //        told after each call settles, while the client drains (core.js drained())
    this.pendingBytes = 0 //        bytes of the pending calls' requests, as encoded
    this.latency = null //          a LatencyHistogram (ops/metrics.js) once metrics are on: each request's whole time
    this.methodLatency = new Map() // method -> PeakEwma, for adaptive attempt timeouts
    this.deadlines = new TimerLists(o.clock, (call) => this.onDeadline(call))
    this.limits = new TimerLists(o.clock, (call) => this.onAttemptTimeout(call))
    this.counts = { retries: 0, hedges: 0, attemptTimeouts: 0, budgetExhausted: 0, ejections: 0, failed: {} }
    // What the calls waiting for a place (capacity.js) do when a place frees or time runs out.
    o.capacity.serve({
      fits: (call, peer) => o.path.fits(call, peer),
      pick: (call) => o.path.open(call),
      hand: (call, peer) => { call.newRound(); this.attempt(call, peer) },
      fail: (call, err) => this.settle(call, err),
      expire: (call, why) => this.settle(call, new BusyError(`zeromesh: ${call.kind.noun} "${call.method}" cannot start before its deadline: ${why}`)),
    })
  }

  /** Null when a new call may start, or the BusyError to refuse it with (maxPending, maxPendingBytes). */
  full () {
    const { maxPending, maxPendingBytes } = this.o
    if (this.pending.size < maxPending && this.pendingBytes < maxPendingBytes) return null
    this.counts.failed.ERR_ZEROMESH_BUSY = (this.counts.failed.ERR_ZEROMESH_BUSY ?? 0) + 1
    const what = this.pending.size >= maxPending ? `${this.pending.size} calls (maxPending ${maxPending})` : `${this.pendingBytes} bytes of calls (maxPendingBytes ${maxPendingBytes})`
    return new BusyError(`zeromesh: this client already holds ${what}, in flight or waiting for capacity; wait for some to settle`)
  }

  /** A new call (its kind made it): tracked from now until it settles, and its first attempt made. */
  start (call, now) {
    call.kind.counts.started++
    this.pending.add(call)
    this.o.tracing.start(call)
    call.diagnostics = begun(call.kind.channel, call.method, call.kind.noun, call.group ?? null, null, 0)
    const signal = call.signal
    if (signal !== undefined) {
      if (signal.aborted) return this.settle(call, call.abortError())
      call.onAbort = () => this.settle(call, call.abortError())
      signal.addEventListener('abort', call.onAbort, { once: true })
    }
    this.o.budget.deposit(now)
    if (call.deadline !== Infinity) call.deadlineTimer = this.deadlines.add(call, call.timeout, now)
    this.dispatch(call, now)
  }

  /** Sends the call's next attempt where the call path says, or makes it wait. */
  dispatch (call, now) {
    if (call.settled) return
    if (call.placing !== null && !this.place(call, now ?? this.clock.now())) return
    const d = this.o.path.route(call, false, now)
    if (d.peer !== undefined) return this.attempt(call, d.peer, now)
    if (d.park) return this.parked.add(call) // until the routes change (a peer up, a list, a service)
    if (d.capacity) {
      if (this.o.capacity.add(call)) return
      return this.settle(call, new BusyError(`zeromesh: ${call.kind.noun} "${call.method}" cannot start before its deadline: ${this.o.capacity.size} calls wait ahead of it for the peers' capacity`))
    }
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

  /**
   * A call that does not know yet where it goes (an event before any peer subscribes: its
   * `placing`) parks as any call with no peer does, until `find(now)` gives where; looked at
   * again as the routes change, and at `recheckAt` (what it finds changes with time: the
   * client's learning of the cluster). Then `spread(found, call, now)` places it, and starts
   * its siblings (one delivery per group or subscriber); false: it is wanted nowhere, and
   * ends with no outcome of its own (its owner has been told). Returns whether it goes on.
   */
  place (call, now) {
    const p = call.placing
    const found = p.find(now)
    if (found === null) {
      this.parked.add(call)
      if (p.recheckAt > now && p.recheckAt < call.deadline && call.retryTimer === null) {
        call.retryTimer = this.clock.setTimeout(() => { call.retryTimer = null; this.parked.delete(call); this.dispatch(call) }, p.recheckAt - now)
      }
      return false
    }
    call.placing = null
    if (call.retryTimer !== null) { this.clock.clearTimeout(call.retryTimer); call.retryTimer = null }
    if (p.spread(found, call, now)) {
      if (call.diagnostics !== null) call.diagnostics.group = call.group ?? null
      return true
    }
    this.settle(call, null, undefined, true)
    return false
  }

  /** The call's attempt on `peer`: packed by its kind, tracked, timed, and sent. */
  attempt (call, peer, now = this.clock.now()) {
    const remaining = timeLeft(call, now)
    const unsized = call.size === 0
    let packed
    try {
      packed = call.kind.pack(call, peer, remaining)
    } catch (err) {
      return this.settle(call, err)
    }
    if (unsized) this.pendingBytes += call.size
    if (call.attempts > 0) this.counts.retries++
    call.attempts++
    call.sentTo(peer)
    if (call.span !== null) this.o.tracing.attempt(call, peer.endpoint, false)
    call.peer = peer
    call.sent = false
    call.sentAt = now
    ;(call.kind.long ? peer.open : peer.calls).add(call)
    if (call.attemptTimeout !== null) {
      const limit = this.attemptTimeoutFor(call, remaining, peer)
      if (limit !== null) {
        call.attemptTimer = this.limits.add(call, limit.step, now)
        call.attemptStep = limit.step
        call.attemptUntil = now + limit.until
      }
    }
    if (call.hedge !== null && call.idempotent && call.attempts === 1) {
      call.hedgeTimer = this.clock.setTimeout(() => this.hedge(call), call.hedge.delayMs)
    }
    call.kind.send(call, peer, packed)
  }

  /** How long this attempt on `peer` may take before another peer is tried: attempt-limit.js. */
  attemptTimeoutFor (call, remaining, peer) {
    return attemptLimit({ idempotent: call.idempotent, given: call.attemptTimeout, remaining, estimate: this.methodLatency.get(call.method)?.value, waves: wavesAt(peer) })
  }

  /**
   * A second copy of a slow idempotent call, to a peer it has not tried, `hedge.delayMs`
   * after the first: the first answer wins and the other copy is cancelled (settle). A hedge
   * uses the retry budget; it is not tied to its peer, so losing that peer changes nothing
   * for the call.
   */
  hedge (call) {
    call.hedgeTimer = null
    if (call.settled) return
    const d = this.o.path.route(call, true)
    if (d.peer === undefined || !this.o.budget.withdraw()) return
    if (!call.kind.copy(call, d.peer, timeLeft(call, this.clock.now()))) return
    call.sentTo(d.peer)
    if (call.span !== null) this.o.tracing.attempt(call, d.peer.endpoint, true)
    this.counts.hedges++
  }

  /** ZeroMQ's verdict on an attempt's frame: null (taken), or why it refused it (the peer never saw it). */
  sent (call, peer, code) {
    if (code === null) {
      if (call.peer !== peer) return
      call.sent = true
      // A delivery that asks for no ack is over once it left: nothing will answer it (at most once).
      if (!call.ack) { call.answeredBy(peer.endpoint); call.repliedBy = peer.endpoint; this.settle(call, null) }
      return
    }
    if (call.settled || call.peer !== peer) return
    this.detach(call)
    if (code === 'EHOSTUNREACH') {
      this.o.table.setState(peer, 'down', 'unreachable')
    } else {
      this.o.table.recordFailure(peer, `send failed: ${code}`)
      if (this.o.ejector.failure(peer)) this.counts.ejections++
    }
    call.lastError = new NoPeersError(`zeromesh: could not send ${call.kind.noun} "${call.method}" to ${peer.endpoint} (${code})`)
    this.retryOrFail(call, Outcome.REFUSED, peer)
  }

  /** The pending call with this id, or undefined (settled, or never ours). */
  find (id) {
    return this.pending.get(id)
  }

  /** An answer from `peer` for a call this client no longer holds: a place is free there if its handler ran. */
  late (peer, status) {
    if (peer.busy && (status === Status.OK || status === Status.VALUES || status === Status.REMOTE)) this.o.capacity.freed(peer)
  }

  /**
   * `peer`'s final word on `call`: `r` is { status, value } or { status, message, code,
   * issues } (a REPLY entry, a STREAM_END). The handler ran (OK, REMOTE), never ran (BUSY,
   * DRAINING, UNKNOWN_METHOD), or the call was invalid.
   */
  ended (call, peer, r) {
    call.answeredBy(peer.endpoint)
    if (call.span !== null) this.o.tracing.reply(call, peer.endpoint, r.status)
    switch (r.status) {
      case Status.OK: return this.answered(call, peer, null, call.values ? [r.value] : r.value)
      case Status.VALUES: return this.answered(call, peer, null, call.values ? r.value : (r.value.length === 0 ? null : r.value[r.value.length - 1]))
      case Status.REMOTE:
        if (r.code === RemoteCode.WORKER_EXIT) return this.threadEnded(call, peer, remoteError(r.message, r.code, r.issues))
        return this.answered(call, peer, remoteError(r.message, r.code, r.issues))
      case Status.BUSY:
      case Status.DRAINING:
      case Status.UNKNOWN_METHOD: return this.refused(call, peer, r.status, r.message)
      case Status.INVALID_REQUEST: return this.settle(call, invalidArgument(`peer ${peer.endpoint} refused the ${call.kind.noun}: ${r.message}`))
      default: return this.settle(call, new ProtocolError(`zeromesh: peer ${peer.endpoint} answered with unknown status ${r.status}`))
    }
  }

  /** The handler on `peer` ran: the call settles with its outcome, and the place it held there is free. */
  answered (call, peer, err, value) {
    call.repliedBy = peer.endpoint
    if (call.kind.measures && call.peer === peer) this.measured(call, peer, err)
    const probe = call.probe === peer
    call.probe = null
    this.settle(call, err, value)
    if (peer.busy) this.o.capacity.freed(peer, probe) // a waiting call takes the place (two, when this one found more)
  }

  /** The worker thread running `call` on `peer` ended under it: the failover policy (failover.js, rule T) decides. */
  threadEnded (call, peer, err) {
    if (call.peer !== peer || call.committed) return this.answered(call, peer, err)
    const d = decide(call, Outcome.THREAD_ENDED, { maxAttempts: this.o.maxAttempts, budgetLeft: this.o.budget.allows(), random: this.o.random, endpoint: peer.endpoint, error: err })
    if (d.budgetSpent === true) this.counts.budgetExhausted++
    if (d.spend === true) this.o.budget.withdraw()
    if (d.action === 'fail') return this.answered(call, peer, d.error)
    call.endedThread = true
    call.lastError = err
    call.lost = true // it ran, in part: in doubt
    this.detach(call)
    if (peer.busy) this.o.capacity.freed(peer) // its place there is free
    return this.dispatch(call)
  }

  /**
   * `peer` did not take `call` (BUSY, DRAINING, UNKNOWN_METHOD): another peer takes it,
   * whatever its idempotency; a busy one makes it wait for a place when every peer is busy.
   * A call already committed to its peer (a stream past its first item) fails instead.
   */
  refused (call, peer, status, message) {
    if (call.peer !== peer) return // an earlier attempt's refusal: the call moved on
    this.detach(call)
    const ep = peer.endpoint
    if (status === Status.BUSY) {
      this.o.table.recordFailure(peer, 'busy')
      this.o.capacity.saturated(peer, call.probe === peer)
      call.probe = null
      if (call.committed) return this.settle(call, new BusyError(`zeromesh: ${ep}: ${message}`))
      // Not an attempt, not a retry (no budget, no maxAttempts): a place, here or elsewhere.
      call.attempts--
      call.lastError = new BusyError(`zeromesh: every peer tried was busy (last: ${ep}: ${message})`)
      return this.dispatch(call)
    }
    if (status === Status.DRAINING) {
      peer.listedGone = false // the peer itself says it is stopping: only a reconnect brings it back
      this.o.table.setState(peer, 'draining', 'draining')
      if (call.committed) return this.settle(call, new DrainingError(`zeromesh: ${ep} stopped while the ${call.kind.noun} "${call.method}" was under way: resume elsewhere`))
      // Not an attempt, not a retry (as busy): the peer took nothing and will take nothing
      // more, and is out of rotation from now on, so this cannot loop. Many peers draining at
      // once (a scale-in, a rollout) must not use up a call's attempts.
      call.attempts--
      call.lastError = new DrainingError(`zeromesh: every peer tried was draining (last: ${ep})`)
      return this.dispatch(call)
    } else {
      // The client's idea of what this peer serves was wrong: it is asked again.
      this.o.notServing(peer, call.method)
      call.lastError = new UnknownMethodError(message, { retryable: !call.committed }) // another peer may serve it
      if (call.committed) return this.settle(call, call.lastError)
    }
    this.retryOrFail(call, Outcome.REFUSED, peer)
  }

  onAttemptTimeout (call) {
    call.attemptTimer = null
    const peer = call.peer // the attempt's: a new attempt or a detach removes the limit
    if (call.settled || peer === null) return
    const now = this.clock.now()
    if (call.attemptTimeout === 'auto' && answering(now, peer.heardAt, call.attemptStep)) {
      // The peer answers other calls (within the last half step): alive. The limit is counted
      // again from what it reports now (its queue may have filled since this call left: a
      // burst's first calls saw none of it), and while within it this call waits its turn
      // there. A peer that went silent (frozen, partitioned) is left at the step, as ever.
      const est = this.methodLatency.get(call.method)?.value
      if (est != null) call.attemptUntil = Math.max(call.attemptUntil, call.sentAt + queuedLimit(est, wavesAt(peer)))
      if (now < call.attemptUntil) {
        call.attemptTimer = this.limits.add(call, nextStep(now, call.attemptUntil, call.attemptStep), now)
        return
      }
    }
    this.counts.attemptTimeouts++
    const latencyMs = now - call.sentAt
    this.o.table.recordFailure(peer, `attempt timed out after ${Math.round(latencyMs)} ms`, latencyMs, now)
    this.strategyResult(peer, { latencyMs, error: 'timeout', at: now })
    if (this.o.ejector.failure(peer)) this.counts.ejections++
    this.retryOrFail(call, Outcome.ATTEMPT_TIMEOUT, peer)
  }

  /**
   * A REPLY frame of `bytes` from `peer`: each entry goes to its call's kind (a request's
   * reply, an event's ack), or counts as late. A frame of several first has `hold(peer)` told,
   * so the calls the callers it wakes make leave in one frame.
   */
  replies (peer, replies, bytes, hold) {
    if (replies.length > 1) hold(peer)
    const each = bytes / replies.length
    for (let i = 0; i < replies.length; i++) {
      const r = replies[i]
      const call = this.pending.get(r.id)
      if (call === undefined) this.late(peer, r.status) // timed out, aborted or answered by another peer
      else call.kind.answer(call, peer, r, each)
    }
  }

  /** Applies the failover policy (failover.js) to a call whose attempt on `peer` ended. */
  retryOrFail (call, outcome, peer) {
    const d = decide(call, outcome, { maxAttempts: this.o.maxAttempts, budgetLeft: this.o.budget.allows(), random: this.o.random, endpoint: peer.endpoint })
    if (d.budgetSpent === true) this.counts.budgetExhausted++
    if (d.spend === true) this.o.budget.withdraw()
    if (d.action === 'fail') return this.settle(call, d.error)
    if (d.action === 'wait') return
    if (outcome !== Outcome.REFUSED) call.lost = true // the earlier attempt may still answer, or may have run
    if (outcome === Outcome.LOST) call.losses++
    this.detach(call)
    if (d.delay === 0) return this.dispatch(call)
    call.retryTimer = this.clock.setTimeout(() => { call.retryTimer = null; this.dispatch(call) }, d.delay)
  }

  /**
   * Moves the calls on `peer` elsewhere. When the peer certainly did not take them
   * (`notTaken`) every call moves at once. Otherwise the connection was lost: answers that
   * arrived before it dropped may still be waiting to be read (ZeroMQ reports the disconnect
   * on another path than the messages), so each call gets LOST_GRACE_MS for its answer; then
   * the failover policy decides (an idempotent call moves to another peer; any other fails
   * with ConnectionLostError because it may or may not have run). A call committed to the
   * peer (a stream past its first item) ends at once.
   */
  lost (peer, notTaken) {
    for (const call of [...peer.calls, ...peer.open]) {
      this.detach(call)
      if (notTaken) {
        call.lastError ??= new NoPeersError(`zeromesh: ${peer.endpoint} cannot take "${call.method}" (${peer.lastError})`)
        this.retryOrFail(call, Outcome.REFUSED, peer)
        continue
      }
      if (call.committed) {
        this.settle(call, new ConnectionLostError(`zeromesh: the connection to ${peer.endpoint} was lost while the ${call.kind.noun} "${call.method}" was under way`))
        continue
      }
      call.lost = true
      call.retryTimer = this.clock.setTimeout(() => {
        call.retryTimer = null
        if (!call.settled) this.retryOrFail(call, Outcome.LOST, peer)
      }, LOST_GRACE_MS)
    }
  }

  /** Ends the call's current attempt: off its peer's list, its attempt limit gone, its kind told. */
  detach (call) {
    const peer = call.peer
    if (peer !== null) {
      ;(call.kind.long ? peer.open : peer.calls).delete(call)
      call.peer = null
      if (peer.retiring && peer.idle) setImmediate(() => { if (peer.retiring && peer.idle) this.o.retired(peer) })
      call.kind.detached(call)
    }
    if (call.attemptTimer !== null) {
      this.limits.remove(call.attemptTimer)
      call.attemptTimer = null
    }
  }

  /** Something changed what peers may take which call: the calls waiting for a peer look again. */
  routesChanged () {
    this.o.capacity.routesChanged()
    if (this.parked.size === 0) return
    // Earliest deadline first, as calls wait for capacity: a call handed back by a peer that
    // died goes ahead of those made since.
    const parked = [...this.parked].sort(byDeadline)
    this.parked.clear()
    for (const call of parked) this.dispatch(call)
  }

  /** Every peer refused this client at the handshake: what waits for a peer fails with `err`. */
  refusedByAll (err) {
    const parked = [...this.parked]
    this.parked.clear()
    for (const call of parked) this.settle(call, err)
  }

  onDeadline (call) {
    call.deadlineTimer = null
    let err
    if (call.placing !== null) {
      err = call.placing.timedOut() // it never learnt where to go: no subscriber within its deadline
    } else if ((call.peer !== null && call.sent) || call.lost) {
      // An attempt is out, or was lost in flight: the call may have run, no answer came.
      err = call.kind.timedOut(call)
    } else if (call.lastError !== null) {
      err = call.lastError
    } else if (call.waiting !== null) {
      // It waited for a busy peer's place (capacity.js) and none freed in time: busy, not absent.
      err = new BusyError(`zeromesh: ${call.kind.noun} "${call.method}" waited for a place on a busy peer until its deadline of ${call.timeout} ms`)
    } else if ([...this.o.table.entries.values()].some((p) => p.refusal !== null)) {
      err = refusalError(this.o.table) // some refused, the others never answered
    } else if (!this.o.table.anyEverUp()) {
      err = new NoPeersError(`zeromesh: no peer reachable within ${call.timeout} ms (tried ${[...this.o.table.entries.keys()].join(', ')})`)
    } else if ((err = this.o.unroutable(call)) !== null) {
      // no peer serves it, nor may one come
    } else {
      err = call.kind.noneUp?.(call) ?? new NoPeersError(`zeromesh: no peer was up for "${call.method}" within ${call.timeout} ms`)
    }
    this.settle(call, err)
  }

  /** The strategy hears how an attempt ended; what it throws is reported, not thrown. */
  strategyResult (peer, result) {
    if (this.o.strategy.onResult === undefined) return
    try {
      this.o.strategy.onResult(peer, result)
    } catch (err) {
      this.o.userFault('strategy.onResult', err)
    }
  }

  /** An answer came from `peer` for the current attempt: its latency goes to the table, the strategy, and the method's estimate. */
  measured (call, peer, error) {
    const now = this.clock.now()
    const latencyMs = now - call.sentAt
    this.o.table.recordSuccess(peer, latencyMs, now)
    this.o.ejector.success(peer)
    this.strategyResult(peer, { latencyMs, error, at: now })
    let m = this.methodLatency.get(call.method)
    if (m === undefined) this.methodLatency.set(call.method, m = new PeakEwma(LATENCY_DECAY_MS))
    m.add(latencyMs, now)
  }

  /** Fails `call` with `err` (a kind's own verdict: a broken stream, its idle timeout). */
  fail (call, err) {
    this.settle(call, err)
  }

  /**
   * Ends a call once: the peers still working on it are told to drop it (a timed-out or
   * hedged attempt, a deadline, an abort), everything held for it goes, it is counted, and
   * its kind hands the outcome to the caller. `quiet`: the caller left (a stream's reader
   * broke off): neither a success nor a failure.
   */
  settle (call, err, value, quiet = false) {
    if (call.settled) return
    call.settled = true
    this.cancel(call)
    this.pending.delete(call)
    this.pendingBytes -= call.size
    this.parked.delete(call)
    if (call.waiting !== null) this.o.capacity.delete(call)
    this.detach(call)
    if (call.deadlineTimer !== null) { this.deadlines.remove(call.deadlineTimer); call.deadlineTimer = null }
    if (call.retryTimer !== null) { this.clock.clearTimeout(call.retryTimer); call.retryTimer = null }
    if (call.hedgeTimer !== null) { this.clock.clearTimeout(call.hedgeTimer); call.hedgeTimer = null }
    if (call.onAbort !== null) call.signal.removeEventListener('abort', call.onAbort)
    const kind = call.kind
    if (this.latency !== null && kind.measures) this.latency.observe(this.clock.now() - call.started)
    if (call.span !== null) this.o.tracing.end(call, err, kind.items?.(call))
    if (call.diagnostics !== null) { const m = call.diagnostics; m.endpoint = call.repliedBy; m.attempts = call.attempts; settled(kind.channel, m, err) }
    if (call.report !== null) { call.report.peer = call.repliedBy; call.report.attempts = call.attempts }
    if (!quiet) {
      if (err === null) kind.counts.ok++
      else { kind.counts.failed++; this.counts.failed[err.code] = (this.counts.failed[err.code] ?? 0) + 1 }
    }
    kind.deliver(call, err, value)
    if (this.onSettled !== null) this.onSettled()
  }

  /** Tells the peers still holding a settled call to drop it: their handler's ctx.signal aborts. */
  cancel (call) {
    for (const ep of call.outstanding) {
      if (this.o.table.get(ep)?.state === 'down') continue
      this.o.send(ep, [encodeCancel([call.id])], () => {})
    }
  }

  /** The client closes: every call fails with `err`. */
  close (err) {
    for (const call of [...this.pending.values()]) this.settle(call, err)
    this.o.capacity.clear()
    this.deadlines.clear()
    this.limits.clear()
  }
}

/** The whole milliseconds a call has left at `now`, as its attempts carry them (deadline.js; 0: no deadline). */
function timeLeft (call, now) {
  return msLeft(call.deadline, call.timeout, now)
}

/** Waves of work queued ahead of a new call at `peer` (attempt-limit.js queuedWaves): this call is on its list already. */
function wavesAt (peer) {
  return queuedWaves(peer.service?.capacity, peer.calls.size - 1, peer.load)
}

function byDeadline (a, b) {
  return a.deadline === b.deadline ? 0 : a.deadline < b.deadline ? -1 : 1 // Infinity - Infinity is NaN
}
