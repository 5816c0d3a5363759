// One call as the lifecycle tracks it (client/calls.js), whatever its kind: what routes it,
// its deadline, the peers it tried, its current attempt and the timers held for it. What the
// kind keeps of its own (a request's promise, a stream's reader) sits behind `owner`, or in
// `resolve`/`reject` for a request, the common case, so that one costs no second object.
import { AbortError } from '../protocol/errors.js'

const NONE = Object.freeze([]) // shared until a call has an endpoint to list (then its peer's `alone`): most never retry

export class Call {
  /**
   * @param {object} kind  how it is sent and answered: a kind of calls.js (requests.js, streams.js)
   * @param {number} id
   * @param {string} method
   * @param {unknown} args
   * @param {object} o    its checked options (client/options.js): timeout (0: none), idempotent, signal, key, version, where, values, headers, attemptTimeout, hedge
   * @param {number} now
   */
  constructor (kind, id, method, args, o, now) {
    this.kind = kind
    this.id = id
    this.idNext = null //  link in the lifecycle's table of calls (runtime/id-table.js)
    this.method = method
    this.args = args
    this.idempotent = o.idempotent
    this.timeout = o.timeout
    this.deadline = o.timeout > 0 ? now + o.timeout : Infinity
    this.started = now
    this.signal = o.signal
    this.key = o.key //         routes by rendezvous hashing when set
    this.version = o.version // a semver range the peer's version must satisfy, or null
    this.where = o.where //     labels the peer must have, or null
    this.headers = o.headers // request headers (PROTOCOL.md 4.1), or null
    this.values = o.values === true // a request that reads several results (PROTOCOL.md 4.2.3): its result is their array
    this.attemptTimeout = o.attemptTimeout ?? null // ms, 'auto', or null (none: a stream)
    this.hedge = o.hedge ?? null // { delayMs }
    this.group = undefined //   an event's subscribing group (null: any group), undefined for a method
    this.pin = null //          the one endpoint it may go to (a broadcast's delivery), or null
    this.placing = null //      where it goes is not known yet (an event's subscribers): { find, spread, recheckAt, timedOut } (calls.js place())
    this.ack = true //          an event's delivery asks for an ack (false: over once ZeroMQ took it)
    // Timers the lifecycle holds for it:
    this.deadlineTimer = null // in the lifecycle's deadlines (TimerLists)
    this.attemptTimer = null //  in its attempt limits (TimerLists)
    this.attemptStep = 0 //      ...each this long...
    this.attemptUntil = 0 //     ...while the peer answers other calls, until then (clock time)
    this.diagnostics = null //   its message on its kind's diagnostics channel, while something subscribes (runtime/diagnostics.js)
    this.hedgeTimer = null
    this.retryTimer = null
    this.onAbort = null
    // Its attempts:
    this.tried = NONE //       endpoints tried in this round
    this.outstanding = NONE // endpoints that got it and have not answered (told to drop it when it settles)
    this.rounds = 0
    this.attempts = 0
    this.peer = null //        PeerEntry of the current attempt
    this.listPrev = null //    links in that peer's CallList (peer-table.js)
    this.listNext = null
    this.sentAt = 0
    this.sent = false //       ZeroMQ took the current attempt: an answer may come
    this.lost = false //       an earlier attempt was lost with its connection: it may have run
    this.endedThread = false // a run of it ended its peer's worker thread (retried elsewhere once: calls.js threadEnded)
    this.losses = 0 //         attempts lost with their connection and moved (the first moves outside the retry budget)
    this.committed = false //  no other peer from now on (a stream's first item arrived, or its input began)
    this.lastError = null //   why the last peer refused (busy, draining, not serving)
    this.size = 0 //           bytes of its request, once encoded (maxPendingBytes)
    this.waiting = null //     its place among the calls waiting for capacity (capacity.js), while it waits
    this.waited = false //     it waited for capacity before: it keeps its turn
    this.probe = null //       the busy peer it was sent to as a probe (capacity.js)
    this.settled = false
    this.span = null //        its CLIENT span, when traced (client/tracing.js)
    this.trace = null //       the trace field its attempts carry
    this.report = null //      the middleware chain's ctx, told who answered (call-context.js), or null
    this.repliedBy = null //   the endpoint whose answer settled it
    this.owner = null //       what its kind keeps for it (a ClientStream), or null
    this.promise = null //     a request's promise, settled by its kind (requests.js)
    this.resolve = null
    this.reject = null
  }

  /**
   * `peer` got this call: it is tried, and told to drop it if the answer comes from elsewhere.
   * A first attempt's lists are the peer's own one-endpoint list (`alone`, frozen), not two new
   * arrays per call: a list is copied, never changed, when it grows or shrinks.
   */
  sentTo (peer) {
    const endpoint = peer.endpoint
    if (!this.tried.includes(endpoint)) this.tried = this.tried.length === 0 ? peer.alone : [...this.tried, endpoint]
    if (!this.outstanding.includes(endpoint)) this.outstanding = this.outstanding.length === 0 ? peer.alone : [...this.outstanding, endpoint]
  }

  /** Every healthy peer was tried: a new round may try them all again. */
  newRound () {
    this.tried = NONE
  }

  /** `endpoint` answered (or ended its side): nothing to cancel there. */
  answeredBy (endpoint) {
    if (this.outstanding.length === 0 || !this.outstanding.includes(endpoint)) return
    this.outstanding = this.outstanding.length === 1 ? NONE : this.outstanding.filter((e) => e !== endpoint)
  }

  abortError () {
    return new AbortError(`zeromesh: ${this.kind.noun} "${this.method}" was aborted`, { cause: this.signal?.reason })
  }
}
