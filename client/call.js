// One request as the client tracks it across attempts: its deadline, the peers it tried,
// the peer of its current attempt, and the promise handed to the caller.
import { AbortError } from '../protocol/errors.js'

const NONE = Object.freeze([]) // shared until a call has an endpoint to list: most never retry

export class Call {
  constructor (id, method, args, o, now) {
    this.id = id
    this.idNext = null // link in the client's table of calls in flight (id-table.js)
    this.method = method
    this.args = args
    this.idempotent = o.idempotent
    this.timeout = o.timeout
    this.deadline = now + o.timeout
    this.signal = o.signal
    this.key = o.key // routes by rendezvous hashing when set
    this.version = o.version // a semver range the peer's version must satisfy, or null
    this.where = o.where //     labels the peer must have, or null
    this.headers = o.headers // request headers (PROTOCOL.md 4.1), or null
    this.report = null //    the middleware chain's ctx, told who answered (call-context.js), or null
    this.repliedBy = null // the endpoint whose answer settled it
    this.attemptTimeout = o.attemptTimeout // ms, or 'auto'
    this.attemptTimer = null // the attempt limit, in the client's attemptLimits (TimerLists)
    this.budgetSpent = false
    this.hedge = o.hedge ?? null // { delayMs }
    this.hedgeTimer = null
    this.onAbort = null
    this.deadlineTimer = null // the deadline, in the client's deadlines (TimerLists)
    this.retryTimer = null
    this.tried = NONE //       endpoints tried in this round
    this.outstanding = NONE // endpoints that got it and have not answered (to cancel)
    this.rounds = 0
    this.attempts = 0
    this.peer = null // PeerEntry of the current attempt
    this.listPrev = null // links in that peer's CallList
    this.listNext = null
    this.sentAt = 0
    this.sent = false // ZeroMQ took the current attempt: a reply may come
    this.lost = false // an earlier attempt was lost with its connection: it may have run
    this.lastError = null // why the last peer refused (busy, draining)
    this.size = 0 //      bytes of its request entry, once encoded (the client's maxPendingBytes)
    this.waiting = null // its place among the calls waiting for capacity (capacity.js), while it waits
    this.waited = false // it waited for capacity before: it keeps its turn
    this.probe = null //   the busy peer it was sent to as a probe (capacity.js)
    this.settled = false
    this.span = null //  its CLIENT span, when traced (client/tracing.js)
    this.trace = null // the trace field its entries carry: the span's context, as the propagator wrote it
    this.promise = new Promise((resolve, reject) => { this.resolve = resolve; this.reject = reject })
  }

  /** `endpoint` got this request: it is tried, and told to drop it if the answer comes from elsewhere. */
  sentTo (endpoint) {
    if (this.tried === NONE) this.tried = [endpoint]
    else if (!this.tried.includes(endpoint)) this.tried.push(endpoint)
    if (this.outstanding === NONE) this.outstanding = [endpoint]
    else if (!this.outstanding.includes(endpoint)) this.outstanding.push(endpoint)
  }

  /** Every healthy peer was tried: a new round may try them all again. */
  newRound () {
    this.tried = NONE
  }

  /** `endpoint` answered: nothing to cancel there. */
  answeredBy (endpoint) {
    const i = this.outstanding.indexOf(endpoint)
    if (i >= 0) this.outstanding.splice(i, 1)
  }

  abortError () {
    return new AbortError(`zeromesh: "${this.method}" was aborted`, { cause: this.signal?.reason })
  }

  succeed (value) {
    this.finish()
    this.resolve(value)
  }

  fail (err) {
    this.finish()
    this.reject(err)
  }

  finish () {
    this.settled = true
    if (this.onAbort !== null) this.signal.removeEventListener('abort', this.onAbort)
  }
}
