// Runs work the intake admitted (intake.js) against inline handlers (or a thread's, through
// the pool) and turns every outcome into a reply entry: a result, a thrown error (message and
// code kept), or the admission's refusal (an unknown method, busy, draining: admission.js).
// Every kind of work, a stream too, begins and runs here, once: its ctx, its span, its
// diagnostics message (begin()), the middleware chain and the handler (call()); what differs
// is what the handler's output becomes: a reply entry (execute()) or a stream's items
// (streams.js). Knows nothing of sockets: it is handed a `reply(entry)` callback per run.
import { remoteValue } from '../protocol/issues.js'
import { runChain } from '../runtime/middleware.js'
import { Status } from '../protocol/constants.js'
import { IdTable } from '../runtime/id-table.js'
import { DrainingError, RemoteCode, AbortError } from '../protocol/errors.js'
import { closeSource, isStream } from '../protocol/stream-producer.js'
import { RequestContext } from './request-context.js'
import { resultEntry } from '../runtime/values.js'
import { PeerTracing } from './tracing.js'
import { channels, begun, answered } from '../runtime/diagnostics.js'

const RUNNING_CAPACITY = 64 // buckets of a connection's table of running requests, to start with

/**
 * A handler that settles this long after its signal aborted (the caller cancelled, its deadline
 * passed, the drain cut it) ran on past it, holding its place: counted in `overran`.
 */
const OVERRUN_MS = 100

export class Dispatcher {
  /**
   * @param {object} o
   * @param {Function[]} [o.middleware]  the peer's middleware (peer.use(), handler modules'), in order: read at each request
   * @param {import('./admission.js').Admission} o.admission  whether new work is taken
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {string} o.endpoint
   * @param {{ publish: Function, broadcast: Function }|null} [o.publisher]  how handlers publish events (ctx.publish)
   */
  constructor (o) {
    this.middleware = o.middleware ?? []
    this.admission = o.admission
    this.clock = o.clock
    this.endpoint = o.endpoint
    this.publisher = o.publisher ?? null
    this.tracing = new PeerTracing() // SERVER spans, when a tracer provider is registered
    this.idleWaiters = []
    this.counts = { requests: 0, unknown: 0, busy: 0, drained: 0, invalid: 0, cancelled: 0, overran: 0 } // ok and errors: by method (stats())
    // Requests and handler errors by method, for methods this peer serves only: a caller
    // cannot add a name (an unknown method counts in `unknown`), so metric labels stay bounded.
    this.byMethod = new Map() // method -> { requests, errors }
  }

  /** Work taken and not over: requests running or queued for a thread, streams open (the load replies report). */
  get inflight () {
    return this.admission.inflight
  }

  /**
   * Begins work of `kind` ('request', 'event', 'stream') for `req` ({ id, method, timeoutMs,
   * trace, headers, group }), arrived `now`, counted in `flow`: its ctx, its span (ctx.traced,
   * when a tracer is registered) and its message on its kind's diagnostics channel
   * (ctx._diagnostics, while something subscribes). Every kind begins here.
   */
  begin (req, kind, flow, now) {
    const ctx = new RequestContext(req, this.endpoint, this.clock, now)
    ctx.kind = kind
    ctx.publisher = this.publisher
    ctx.flow = flow
    this.tracing.start(req, ctx)
    ctx._diagnostics = begun(channelOf(kind), req.method, kind, ctx.group, this.endpoint)
    return ctx
  }

  /**
   * Calls `fn(args, ctx)` for work begun with `ctx`: behind the middleware (the chain runs
   * with the handler's ctx, whose `args` a middleware may change; the handler last), in its
   * span. Returns what it returns; throws what it throws. Every kind runs its handler here: a
   * request's or an event's outcome becomes a reply entry (execute()), a stream's the items of
   * its producer (streams.js produce()).
   */
  call (fn, args, ctx) {
    const run = this.middleware.length === 0 ? fn : this.chained(fn)
    return ctx.traced === null ? run(args, ctx) : ctx.traced.run(run, args, ctx)
  }

  /**
   * Runs `fn`, work the admission took already (holding `bytes`), for `req` ({ id, method,
   * args, timeoutMs, trace, headers }): begun (its ctx of `kind`: 'request', 'event'; its
   * span and diagnostics), called behind the middleware, then `reply` once with the entry of
   * its outcome, counted in `tally` ({ ok, errors }: its method's, or its event's). The
   * admission's place and bytes (in `flow`) are given back before the reply is made, so the
   * load the reply reports (reply-outbox.js) is the work still running.
   */
  execute (req, fn, reply, scope, now, bytes, tally, kind, flow) {
    const admission = this.admission
    const ctx = this.begin(req, kind, flow, now)
    if (ctx.traced !== null) reply = ctx.traced.replying(reply) // the reply ends the span
    if (ctx._diagnostics !== null) reply = diagnosed(channelOf(kind), ctx._diagnostics, reply)
    let out
    try {
      out = this.call(fn, req.args, ctx)
    } catch (err) {
      ctx.done()
      admission.release(bytes, false, flow)
      reply(this.failure(req.id, err, tally))
      if (admission.inflight === 0) this.wakeIdle()
      return
    }
    if (out === null || typeof out !== 'object' || typeof out.then !== 'function') {
      ctx.done()
      admission.release(bytes, false, flow)
      if (isStream(out)) { tally.errors++; reply(this.streamOnly(req, out)) } else { tally.ok++; reply(resultEntry(req, out)) }
      if (admission.inflight === 0 && this.idleWaiters.length > 0) this.wakeIdle() // a drain may wait for this last place
      return
    }
    if (scope !== null) (scope.running ??= new IdTable({ capacity: RUNNING_CAPACITY, key: 'requestId', link: '_next' })).add(ctx)
    Promise.resolve(out).then(
      (value) => {
        admission.release(bytes, false, flow)
        if (isStream(value)) { tally.errors++; return reply(ctx.cancelled ? null : this.streamOnly(req, value)) }
        tally.ok++
        reply(ctx.cancelled ? null : resultEntry(req, value))
      },
      // Past its deadline a request gets no answer (RemoteCode.EXPIRED): its client has its own
      // timer, set for the same instant, and a handler cut by it must not beat that timer with an error.
      (err) => { admission.release(bytes, false, flow); reply(ctx.cancelled || ctx.expired ? null : this.failure(req.id, err, tally)) },
    ).finally(() => {
      ctx.done()
      if ((ctx.cancelled || ctx.deadline !== Infinity) && ctx.abortedFor(this.clock.now()) > OVERRUN_MS) this.counts.overran++
      if (scope !== null) scope.running.delete(ctx)
      if (admission.inflight === 0) this.wakeIdle()
    })
  }

  /** Counters of requests and their outcomes: replies OK and handler errors summed over the methods. */
  stats () {
    let ok = 0
    let errors = 0
    for (const mc of this.byMethod.values()) { ok += mc.ok; errors += mc.errors }
    return { ...this.counts, ok, errors }
  }

  /** A request or a stream of served `method`, admitted: counted; returns its method's counters (requests, ok, errors). */
  counted (method) {
    this.counts.requests++
    return this.method(method)
  }

  /** The counters of a served method (requests, ok, errors), counting one more request. */
  method (name) {
    let mc = this.byMethod.get(name)
    if (mc === undefined) this.byMethod.set(name, mc = { requests: 0, ok: 0, errors: 0 })
    mc.requests++
    return mc
  }

  /** The reply entry of a request's or a stream's refusal (admission.js), counted by its status. */
  refusal (id, method, refused) {
    this.counts.requests++
    if (refused.status === Status.UNKNOWN_METHOD) this.counts.unknown++
    else {
      this.method(method)
      if (refused.status === Status.DRAINING) this.counts.drained++
      else this.counts.busy++
    }
    return [id, refused.status, [refused.message, null]]
  }

  /** A stream admitted in `flow` ended; `failed` counts it as a handler error of `method`. */
  release (method, failed, bytes, flow) {
    this.admission.release(bytes, true, flow)
    const mc = this.byMethod.get(method)
    if (mc !== undefined) { if (failed) mc.errors++; else mc.ok++ }
    if (this.admission.inflight === 0) this.wakeIdle()
  }

  /** `fn` behind the middleware: the chain runs with the handler's ctx (its `args` the middleware may change), the handler last. */
  chained (fn) {
    return (args, ctx) => {
      ctx.args = args
      return runChain(this.middleware, ctx, () => fn(ctx.args, ctx))
    }
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

  /** An entry that failed validation: answered, never run. */
  invalid (item, reply) {
    this.counts.invalid++
    reply([item.id, Status.INVALID_REQUEST, [`invalid request: ${item.reason}`, null]])
  }

  /** A plain request got a stream of items from its handler: the stream is closed unread, the caller told to stream. */
  streamOnly (req, out) {
    closeSource(out[Symbol.asyncIterator]())
    return [req.id, Status.REMOTE, [`method "${req.method}" streams its results: call it with client.stream()`, RemoteCode.STREAM_ONLY]]
  }

  /** The reply entry of a handler's throw, counted in `tally` as an error unless it is a stopping peer's refusal. */
  failure (id, err, tally) {
    const value = remoteValue(err)
    // Work the peer never started because it is stopping: the client may go elsewhere.
    if (value[1] === DrainingError.code && this.admission.draining) { this.counts.drained++; return [id, Status.DRAINING, [value[0], null]] }
    tally.errors++
    return [id, Status.REMOTE, value]
  }

  /** From now on new work is refused with DRAINING; resolves once the work in flight is over. */
  drain () {
    this.admission.draining = true
    if (this.admission.inflight === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  wakeIdle () {
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const resolve of w) resolve()
  }
}

/** The diagnostics channel of work of `kind`. */
function channelOf (kind) {
  return kind === 'request' ? channels.peerRequest : kind === 'event' ? channels.peerEvent : channels.peerStream
}

/** `reply` that first publishes its entry's outcome on the diagnostics `channel` (null: cancelled by the client). */
function diagnosed (channel, message, reply) {
  return (entry) => {
    if (entry === null) answered(channel, message, Status.REMOTE, ['cancelled by the client', AbortError.code])
    else answered(channel, message, entry[1], entry[2])
    reply(entry)
  }
}
