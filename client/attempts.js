// What becomes of a request's attempts: each sent to one peer (alone at once, or coalesced
// through the outbox), hedged, answered, refused, timed out or lost with its peer, and what
// the failover policy (failover.js) makes of each ending: another peer, a pause, or the
// call's error. The client (client.js) picks the peer and settles the call.
import { Outbox } from '../transport/outbox.js'
import { TimerLists } from './timer-lists.js'
import { PeakEwma } from './peak-ewma.js'
import { decide, Outcome } from './failover.js'
import { Kind } from './call-path.js'
import { refusalError } from './refusals.js'
import { encodeRequest, encodeCancel } from '../protocol/codec.js'
import { packEntry, requestFrame, FRAME_OVERHEAD } from '../protocol/frames.js'
import { Status, Limits, Accepts } from '../protocol/constants.js'
import {
  TimeoutError, NoPeersError, UnknownMethodError, remoteError, BusyError, DrainingError, ProtocolError, invalidArgument,
} from '../protocol/errors.js'
import { ReplySizes } from './reply-sizes.js'

const LOST_GRACE_MS = 50 //       time for replies already received to be read after a disconnect
const LATENCY_DECAY_MS = 10000 // how fast a method's latency estimate forgets a slow spell

export class Attempts {
  /**
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {{ send(ep, frames, done): void }} o.transport  the client's connector
   * @param {object} o.counts      the client's counters (retries, hedges, attempt timeouts, ejections, budget)
   * @param {number} o.maxMessageSize
   * @param {number} o.maxAttempts
   * @param {() => number} o.random
   * @param {import('./call-path.js').CallPath} o.path        where a hedge goes
   * @param {import('./capacity.js').CapacityWait} o.capacity  busy peers, places freed
   * @param {import('./tracing.js').ClientTracing} o.tracing
   * @param {{ onResult?: Function }} o.strategy              told how each attempt ended
   * @param {import('./ejection.js').Ejector} o.ejector
   * @param {import('./retry-budget.js').RetryBudget} o.budget
   * @param {{ get(id): object|undefined }} o.pending         the client's calls in flight, by id
   * @param {(call, now?) => void} o.dispatch                 sends a call's next attempt (the call path)
   * @param {(call, err: Error|null, value?) => void} o.settle ends a call
   * @param {(bytes: number) => void} o.sized                 a call's request was encoded: its bytes count toward maxPendingBytes
   * @param {(peer, notTaken: boolean) => void} o.streamsLost  the streams on a lost peer move or end
   * @param {(peer, method: string) => void} o.notServing      a peer answered UNKNOWN_METHOD
   * @param {(peer) => void} o.retired                        a peer left out of the subset has no calls left
   * @param {(what: string, err: unknown) => void} o.userFault user code threw
   * @param {(call) => Error|null} o.unroutable               why no peer may take the call, when none ever may
   */
  constructor (o) {
    this.o = o
    this.methodLatency = new Map() // method -> PeakEwma, for adaptive attempt timeouts
    this.replySizes = new ReplySizes() // method -> bytes per reply: large ones are not coalesced
    this.limits = new TimerLists(o.clock, (call) => this.onAttemptTimeout(call)) // attempt timeouts
    // Requests for one peer made in the same turn leave together (coalescing); each in a frame
    // still fails over on its own.
    this.outbox = new Outbox({
      send: (peer, entries, calls) => o.transport.send(peer.endpoint, [requestFrame(entries)], (code) => { for (const c of calls) this.onSent(c, peer, code) }),
      keep: (call, peer) => !call.settled && call.peer === peer, // not aborted or moved on before it left
      maxBatch: Limits.maxBatch, // what a peer accepts by default
      maxBytes: o.maxMessageSize,
      overhead: FRAME_OVERHEAD,
      early: true,
    })
  }

  /** A REPLY frame of `bytes` from `peer`: each answer settles or moves its call. */
  onReplies (peer, replies, bytes) {
    if (replies.length > 1) this.outbox.hold(peer, peer) // the callers it wakes send in one frame
    const each = bytes / replies.length
    for (const r of replies) this.onReply(peer, r, each)
  }

  /** Tells the peers still working on a settled call to drop it: their handler's ctx.signal aborts. */
  cancel (call) {
    for (const ep of call.outstanding) {
      if (this.o.table.get(ep)?.state === 'down') continue
      this.o.transport.send(ep, [encodeCancel([call.id])], () => {})
    }
  }

  close () {
    this.limits.clear()
  }

  attempt (call, peer, now = this.o.clock.now()) {
    const remaining = Math.max(1, Math.ceil(call.deadline - now))
    // A lone request, or one whose method's replies are large (reply-sizes.js), is packed as
    // its whole frame, to leave at once as it is; any other as an entry, to be joined with the
    // others of this turn (transport/outbox.js).
    const lone = this.outbox.lone(peer, peer.calls.size) || this.replySizes.large(call.method)
    const entry = requestEntry(call, remaining)
    let packed
    try {
      packed = lone ? encodeRequest([entry]) : packEntry(entry)
    } catch (err) {
      return this.o.settle(call, invalidArgument(`args of "${call.method}" could not be encoded: ${err?.message ?? err}`))
    }
    const size = lone ? packed.length : FRAME_OVERHEAD + packed.length
    if (size > this.o.maxMessageSize) {
      return this.o.settle(call, invalidArgument(`request "${call.method}" is ${size} bytes, larger than maxMessageSize ${this.o.maxMessageSize}`))
    }
    if (call.size === 0) { call.size = size; this.o.sized(size) }
    if (call.attempts > 0) this.o.counts.retries++
    call.attempts++
    call.sentTo(peer.endpoint)
    if (call.span !== null) this.o.tracing.attempt(call, peer.endpoint, false)
    call.peer = peer
    call.sent = false
    call.sentAt = now
    peer.calls.add(call)
    const limit = this.attemptTimeoutFor(call, remaining)
    if (limit !== null) call.attemptTimer = this.limits.add(call, limit, now)
    if (call.hedge !== null && call.idempotent && call.attempts === 1) {
      call.hedgeTimer = this.o.clock.setTimeout(() => this.hedge(call), call.hedge.delayMs)
    }
    if (lone) {
      this.o.transport.send(peer.endpoint, [packed], (code) => this.onSent(call, peer, code))
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
    const d = this.o.path.route(call, Kind.HEDGE)
    if (d.peer === undefined || !this.o.budget.withdraw()) return
    const peer = d.peer
    const remaining = Math.max(1, Math.ceil(call.deadline - this.o.clock.now()))
    let frame
    try { frame = encodeRequest([requestEntry(call, remaining)]) } catch { return }
    call.sentTo(peer.endpoint)
    if (call.span !== null) this.o.tracing.attempt(call, peer.endpoint, true)
    this.o.counts.hedges++
    this.o.transport.send(peer.endpoint, [frame], () => {})
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
    this.o.counts.attemptTimeouts++
    const now = this.o.clock.now()
    const latencyMs = now - call.sentAt
    this.o.table.recordFailure(peer, `attempt timed out after ${Math.round(latencyMs)} ms`, latencyMs, now)
    this.strategyResult(peer, { latencyMs, error: 'timeout', at: now })
    if (this.o.ejector.failure(peer)) this.o.counts.ejections++
    this.retryOrFail(call, Outcome.ATTEMPT_TIMEOUT, peer)
  }

  /** Applies the failover policy (client/failover.js) to a call whose attempt on `peer` ended. */
  retryOrFail (call, outcome, peer) {
    const d = decide(call, outcome, { maxAttempts: this.o.maxAttempts, budget: this.o.budget, random: this.o.random, endpoint: peer.endpoint })
    if (call.budgetSpent) { call.budgetSpent = false; this.o.counts.budgetExhausted++ }
    if (d.action === 'fail') return this.o.settle(call, d.error)
    if (d.action === 'wait') return
    if (outcome !== Outcome.REFUSED) call.lost = true // the earlier attempt may still answer, or may have run
    this.detach(call)
    if (d.delay === 0) return this.o.dispatch(call)
    call.retryTimer = this.o.clock.setTimeout(() => { call.retryTimer = null; this.o.dispatch(call) }, d.delay)
  }

  onSent (call, peer, code) {
    if (code === null) { call.sent = true; return }
    if (call.settled || call.peer !== peer) return
    // ZeroMQ refused the message: the peer certainly never saw it, so go elsewhere at once.
    this.detach(call)
    if (code === 'EHOSTUNREACH') {
      this.o.table.setState(peer, 'down', 'unreachable')
    } else {
      this.o.table.recordFailure(peer, `send failed: ${code}`)
      if (this.o.ejector.failure(peer)) this.o.counts.ejections++
    }
    call.lastError = new NoPeersError(`zeromesh: could not send "${call.method}" to ${peer.endpoint} (${code})`)
    this.retryOrFail(call, Outcome.REFUSED, peer)
  }

  onReply (peer, r, bytes) {
    const call = this.o.pending.get(r.id)
    if (call === undefined) { // late: timed out, aborted or answered by another peer
      if (peer.busy && (r.status === Status.OK || r.status === Status.REMOTE)) this.o.capacity.freed(peer) // it ran, and its place is free
      return
    }
    call.answeredBy(peer.endpoint)
    this.replySizes.observe(call.method, bytes)
    if (call.span !== null) this.o.tracing.reply(call, peer.endpoint, r.status)
    switch (r.status) {
      case Status.OK:
        call.repliedBy = peer.endpoint
        this.measured(call, peer, null)
        this.o.settle(call, null, r.value)
        if (peer.busy) this.o.capacity.freed(peer) // a place is free there: a waiting call takes it
        return
      case Status.UNKNOWN_METHOD:
        // The handler never ran: the client's idea of what this peer serves was wrong (the
        // peer stopped serving it, or is older and never said). Go to a peer that serves it,
        // idempotent or not, and ask this one again what it serves.
        if (call.peer !== peer) return
        this.detach(call)
        this.o.notServing(peer, call.method)
        call.lastError = new UnknownMethodError(r.message)
        return this.retryOrFail(call, Outcome.REFUSED, peer)
      case Status.REMOTE: {
        call.repliedBy = peer.endpoint
        const err = remoteError(r.message, r.code, r.issues)
        this.measured(call, peer, err)
        this.o.settle(call, err)
        if (peer.busy) this.o.capacity.freed(peer)
        return
      }
      case Status.INVALID_REQUEST:
        return this.o.settle(call, invalidArgument(`peer ${peer.endpoint} refused the request: ${r.message}`))
      case Status.BUSY:
        // The peer did not take it: not an attempt, not a retry (no budget, no maxAttempts).
        // Another peer with room takes it, or it waits for a place (client/capacity.js).
        if (call.peer !== peer) return
        this.detach(call)
        call.attempts--
        this.o.table.recordFailure(peer, 'busy')
        this.o.capacity.saturated(peer, call.probe === peer)
        call.probe = null
        call.lastError = new BusyError(`zeromesh: every peer tried was busy (last: ${peer.endpoint}: ${r.message})`)
        return this.o.dispatch(call)
      case Status.DRAINING:
        if (call.peer !== peer) return
        this.detach(call)
        peer.listedGone = false // the peer itself says it is stopping: only a reconnect brings it back
        this.o.table.setState(peer, 'draining', 'draining')
        call.lastError = new DrainingError(`zeromesh: every peer tried was draining (last: ${peer.endpoint})`)
        return this.retryOrFail(call, Outcome.REFUSED, peer)
      default:
        return this.o.settle(call, new ProtocolError(`zeromesh: peer ${peer.endpoint} answered with unknown status ${r.status}`))
    }
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

  /** An answer came from `peer`: its latency goes to the table and to the strategy. */
  measured (call, peer, error) {
    if (call.peer !== peer) return // an earlier attempt's answer: its timing is not this one's
    const now = this.o.clock.now()
    const latencyMs = now - call.sentAt
    this.o.table.recordSuccess(peer, latencyMs, now)
    this.o.ejector.success(peer)
    this.strategyResult(peer, { latencyMs, error, at: now })
    let m = this.methodLatency.get(call.method)
    if (m === undefined) this.methodLatency.set(call.method, m = new PeakEwma(LATENCY_DECAY_MS))
    m.add(latencyMs, now)
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
    this.o.streamsLost(peer, notTaken)
    for (const call of [...peer.calls]) {
      this.detach(call)
      if (notTaken) {
        call.lastError ??= new NoPeersError(`zeromesh: ${peer.endpoint} cannot take "${call.method}" (${peer.lastError})`)
        this.retryOrFail(call, Outcome.REFUSED, peer)
        continue
      }
      call.lost = true
      call.retryTimer = this.o.clock.setTimeout(() => {
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
      if (peer.retiring && peer.calls.size === 0) setImmediate(() => { if (peer.retiring && peer.calls.size === 0) this.o.retired(peer) })
    }
    if (call.attemptTimer !== null) {
      this.limits.remove(call.attemptTimer)
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
    } else if ([...this.o.table.entries.values()].some((p) => p.refusal !== null)) {
      err = refusalError(this.o.table) // some refused, the others never answered
    } else if (!this.o.table.anyEverUp()) {
      err = new NoPeersError(`zeromesh: no peer reachable within ${ms} ms (tried ${[...this.o.table.entries.keys()].join(', ')})`)
    } else if ((err = this.o.unroutable(call)) !== null) {
      // no peer serves it, nor may one come
    } else {
      err = new NoPeersError(`zeromesh: no peer was up for "${call.method}" within ${ms} ms`)
    }
    this.o.settle(call, err)
  }
}

/** A call's REQUEST entry (PROTOCOL.md 4.1): this client reads large binary results in bulk frames (4.2.1). */
function requestEntry (call, remaining) {
  if (call.headers === null) return [call.id, call.method, call.args, remaining, call.trace, Accepts.BULK]
  return [call.id, call.method, call.args, remaining, call.trace, Accepts.BULK, call.headers]
}
