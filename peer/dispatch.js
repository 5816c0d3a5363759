// Runs requests against inline handlers and turns every outcome into a reply entry:
// a result, a thrown error (message and code kept), an unknown method, busy, draining.
// Knows nothing of sockets: it is handed a `reply(entry)` callback per request.
import { remoteValue } from '../protocol/issues.js'
import { NO_HEADERS } from '../protocol/headers.js'
import { runChain } from '../runtime/middleware.js'
import { Status } from '../protocol/constants.js'
import { IdTable } from '../runtime/id-table.js'
import { DrainingError, RemoteCode } from '../protocol/errors.js'
import { closeSource } from '../protocol/stream-producer.js'
import { PeerTracing } from './tracing.js'

const RUNNING_CAPACITY = 64 // buckets of a connection's table of running requests, to start with

export class Dispatcher {
  /**
   * @param {object} o
   * @param {Record<string, Function>} o.handlers
   * @param {Function[]} [o.middleware]  the peer's middleware (peer.use(), handler modules'), in order: read at each request
   * @param {number} o.maxInflight
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {string} o.endpoint
   * @param {((req: object, entry: Array, arrived: number) => void)|null} [o.debug]  told of every answer, at --log-level debug only
   */
  constructor (o) {
    this.handlers = o.handlers
    this.middleware = o.middleware ?? []
    this.maxInflight = o.maxInflight
    this.clock = o.clock
    this.endpoint = o.endpoint
    this.debug = o.debug ?? null
    this.tracing = new PeerTracing() // SERVER spans, when a tracer provider is registered
    this.inflight = 0
    this.draining = false
    this.idleWaiters = []
    this.counts = { requests: 0, ok: 0, errors: 0, unknown: 0, busy: 0, drained: 0, invalid: 0, cancelled: 0 }
    // Requests and handler errors by method, for methods this peer serves only: a caller
    // cannot add a name (an unknown method counts in `unknown`), so metric labels stay bounded.
    this.byMethod = new Map() // method -> { requests, errors }
  }

  /** The handlers changed (Peer.serve, unserve). */
  changed () {
    this.servedText = undefined
  }

  /**
   * Runs one decoded request; calls `reply([id, status, value])` exactly once,
   * synchronously for the refusals and when the handler returns synchronously. `scope` (the
   * client connection's ClientRequests, or null) keeps the contexts of running async
   * requests in its `running` table, by request id, so the client can cancel them (an
   * IdTable, not a Map: runtime/id-table.js says why). `now`: the
   * clock's time when the request arrived, if the caller has it. A request the client
   * cancelled gets no reply: `reply(null)` says it is over.
   */
  run (req, reply, scope = null, now = this.clock.now()) {
    this.counts.requests++
    if (this.debug !== null) { const answer = reply; reply = (entry) => { answer(entry); if (entry !== null) this.debug(req, entry, now) } }
    if (this.draining) {
      this.counts.drained++
      return reply([req.id, Status.DRAINING, ['peer is draining', null]])
    }
    const fn = Object.hasOwn(this.handlers, req.method) ? this.handlers[req.method] : undefined
    if (typeof fn !== 'function') {
      this.counts.unknown++
      return reply([req.id, Status.UNKNOWN_METHOD, [`unknown method "${req.method}"; this peer serves ${this.served()}`, null]])
    }
    let mc = this.byMethod.get(req.method)
    if (mc === undefined) this.byMethod.set(req.method, mc = { requests: 0, errors: 0 })
    mc.requests++
    if (this.inflight >= this.maxInflight) {
      this.counts.busy++
      return reply([req.id, Status.BUSY, [`peer busy: ${this.inflight} requests in flight`, null]])
    }
    const ctx = new RequestContext(req, this.endpoint, this.clock, now)
    const traced = this.tracing.start(req, ctx) // null unless traced: then the reply ends the span
    if (traced !== null) reply = traced.replying(reply)
    let out
    try {
      const run = this.middleware.length === 0 ? fn : this.chained(fn)
      out = traced === null ? run(req.args, ctx) : traced.run(run, req.args, ctx)
    } catch (err) {
      ctx.done()
      mc.errors++
      return reply(this.failure(req.id, err))
    }
    if (out === null || typeof out !== 'object' || typeof out.then !== 'function') {
      ctx.done()
      if (isStream(out)) { mc.errors++; return reply(this.streamOnly(req, out)) }
      this.counts.ok++
      return reply([req.id, Status.OK, out])
    }
    this.inflight++
    if (scope !== null) (scope.running ??= new IdTable({ capacity: RUNNING_CAPACITY, key: 'requestId', link: '_next' })).add(ctx)
    // The count drops before the reply is made, so the load the reply reports (Peer.replyHead)
    // is the work still running, not counting the request just answered.
    Promise.resolve(out).then(
      (value) => {
        this.inflight--
        if (isStream(value)) { mc.errors++; return reply(ctx.cancelled ? null : this.streamOnly(req, value)) }
        this.counts.ok++
        reply(ctx.cancelled ? null : [req.id, Status.OK, value])
      },
      (err) => { this.inflight--; mc.errors++; reply(ctx.cancelled ? null : this.failure(req.id, err)) },
    ).finally(() => {
      ctx.done()
      if (scope !== null) scope.running.delete(ctx)
      if (this.inflight === 0) this.wakeIdle()
    })
  }

  /** `fn` behind the middleware: the chain runs with the handler's ctx (its `args` the middleware may change), the handler last. */
  chained (fn) {
    return (args, ctx) => {
      ctx.args = args
      return runChain(this.middleware, ctx, () => fn(ctx.args, ctx))
    }
  }

  /** The methods this peer serves, for an unknown method's message (at most 20 named). */
  served () {
    if (this.servedText === undefined) {
      const names = Object.keys(this.handlers).filter((k) => typeof this.handlers[k] === 'function').sort()
      this.servedText = names.length === 0 ? 'no methods' : names.length <= 20 ? names.join(', ') : `${names.slice(0, 20).join(', ')} and ${names.length - 20} more`
    }
    return this.servedText
  }

  /**
   * The client no longer wants the answer (it timed out, was aborted, or another peer answered
   * first): the handler's `ctx.signal` aborts and its result is dropped. Returns whether the
   * request was running.
   */
  cancel (scope, id) {
    const ctx = scope.running?.get(id)
    if (ctx === undefined) return false
    this.counts.cancelled++
    ctx.cancel()
    return true
  }

  /**
   * A stream takes a place among the requests in flight (maxInflight) for as long as it is
   * open: false when there is none (the stream is refused busy). release() gives it back.
   */
  hold (method) {
    this.counts.requests++
    let mc = this.byMethod.get(method)
    if (mc === undefined) this.byMethod.set(method, mc = { requests: 0, errors: 0 })
    mc.requests++
    if (this.inflight >= this.maxInflight) { this.counts.busy++; return false }
    this.inflight++
    return true
  }

  /** A stream held by hold() ended; `failed` counts it as a handler error of `method`. */
  release (method, failed) {
    this.inflight--
    if (failed) { this.counts.errors++; const mc = this.byMethod.get(method); if (mc !== undefined) mc.errors++ } else this.counts.ok++
    if (this.inflight === 0) this.wakeIdle()
  }

  /** A request the peer has no room for (its byte budget): answered busy, never run. */
  busy (req, reply, message) {
    this.counts.busy++
    reply([req.id, Status.BUSY, [message, null]])
  }

  /** An entry that failed validation: answered, never run. */
  invalid (item, reply) {
    this.counts.invalid++
    reply([item.id, Status.INVALID_REQUEST, [`invalid request: ${item.reason}`, null]])
  }

  /** A plain request got a stream of items from its handler: the stream is closed unread, the caller told to stream. */
  streamOnly (req, out) {
    this.counts.errors++
    closeSource(out[Symbol.asyncIterator]())
    return [req.id, Status.REMOTE, [`method "${req.method}" streams its results: call it with client.stream()`, RemoteCode.STREAM_ONLY]]
  }

  failure (id, err) {
    const value = remoteValue(err)
    // Work the peer never started because it is stopping: the client may go elsewhere.
    if (value[1] === DrainingError.code && this.draining) { this.counts.drained++; return [id, Status.DRAINING, [value[0], null]] }
    this.counts.errors++
    return [id, Status.REMOTE, value]
  }

  /** From now on new requests are refused with DRAINING; resolves once in-flight ones finish. */
  drain () {
    this.draining = true
    if (this.inflight === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  wakeIdle () {
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const resolve of w) resolve()
  }
}

/** Whether a handler's result is a stream of items (an async generator, a Readable, any async iterable). */
export function isStream (out) {
  return out !== null && typeof out === 'object' && typeof out[Symbol.asyncIterator] === 'function'
}

/**
 * The `ctx` a handler gets: who it is, its deadline and a signal that fires at the deadline.
 * The deadline is anchored once, when the request arrives (`now`, plus the time the client
 * had left when it sent it); a worker thread gets the same instant (handoffDeadline), not a
 * new anchor.
 */
export class RequestContext {
  constructor (req, endpoint, clock, now, deadline = req.timeoutMs > 0 ? now + req.timeoutMs : Infinity) {
    this.kind = 'request' // or 'stream': for middleware, which sees both
    this.method = req.method
    this.requestId = req.id
    this.headers = req.headers ?? NO_HEADERS // what the caller sent beside the args (PROTOCOL.md 4.1); a middleware may replace it
    this.endpoint = endpoint
    this.timeoutMs = req.timeoutMs // 0: the client set no deadline
    this.deadline = deadline
    this._clock = clock
    this._ac = null
    this._timer = null
    this._next = null // link in its connection's table of running requests
    this.cancelled = false
    this.traced = null // its SERVER span (peer/tracing.js), when traced
    this.runner = null // whoever runs the handler elsewhere (a worker thread's task): told of a cancel by runner.cancel()
  }

  /** The client cancelled: the signal aborts (now, or when first read). */
  cancel () {
    this.cancelled = true
    this._ac?.abort(new Error('cancelled by the client'))
    this.runner?.cancel()
  }

  /** The SERVER span's context as the propagator writes it, or null when not traced (README, Observing it). */
  get trace () {
    return this.traced === null ? null : this.traced.carrier()
  }

  /** Milliseconds left before the client gives up (Infinity without a deadline). */
  remaining () {
    return Math.max(0, this.deadline - this._clock.now())
  }

  /**
   * The deadline as an instant every thread of this process reads alike, for a hand-off to a
   * worker thread (0: none): performance.timeOrigin + performance.now() is one timeline for
   * all of them, whatever this context's clock (an injected clock's remaining time is
   * translated onto it here, once). threadDeadline() turns it back in the thread.
   */
  handoffDeadline () {
    return this.deadline === Infinity ? 0 : performance.timeOrigin + performance.now() + this.remaining()
  }

  /** Aborted when the deadline passes; created on first use, so it costs nothing unused. */
  get signal () {
    if (this._ac === null) {
      this._ac = new AbortController()
      if (this.cancelled) this._ac.abort(new Error('cancelled by the client'))
      else if (this.deadline !== Infinity) {
        this._timer = this._clock.setTimeout(() => this._ac.abort(new Error('deadline passed')), this.remaining())
      }
    }
    return this._ac.signal
  }

  /**
   * Whether its deadline has passed: less than 1 ms is left (a timer may fire up to a
   * millisecond early: libuv's clock is in whole ms), or its signal aborted for the deadline.
   */
  get expired () {
    if (this.deadline === Infinity) return false
    return this.remaining() < 1 || (this._ac !== null && this._ac.signal.aborted && !this.cancelled)
  }

  done () {
    if (this._timer !== null) this._clock.clearTimeout(this._timer)
  }
}

/** A handoffDeadline() as a deadline on this thread's performance.now() (Infinity for 0). */
export function threadDeadline (at) {
  return at > 0 ? at - performance.timeOrigin : Infinity
}
