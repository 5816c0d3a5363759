// The `ctx` every handler gets, on the main thread or (as ThreadContext, worker.js) in a worker
// thread: which request it is, its headers, its deadline, and a signal that aborts at the
// deadline or when the client cancels.
import { NO_HEADERS } from '../protocol/headers.js'
import { EVENT_ID_HEADER, DELIVERIES_HEADER } from '../runtime/durable-hook.js'

/**
 * The `ctx` a handler gets: who it is, its deadline and a signal that fires at the deadline.
 * The deadline is anchored once, when the request arrives (`now`, plus the time the client
 * had left when it sent it); a worker thread gets the same instant (handoffDeadline), not a
 * new anchor.
 */
export class RequestContext {
  constructor (req, endpoint, clock, now, deadline = req.timeoutMs > 0 ? now + req.timeoutMs : Infinity) {
    this.kind = 'request' // or 'stream', 'event': for middleware, which sees them all
    this.group = req.group ?? null // an event's subscribing group (null: every subscription, a broadcast)
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
    this.cancelledAt = 0
    this.traced = null // its SERVER span (peer/tracing.js), when traced
    this._diagnostics = null // its message on its kind's diagnostics channel (runtime/diagnostics.js), while something subscribes
    this.runner = null // whoever runs the handler elsewhere (a worker thread's task): told of a cancel by runner.cancel()
    this.publisher = null // how its handler publishes events (peer/publisher.js), set by whoever runs it
    this.flow = null // the flow it is counted in when flows share a busy peer (flows.js), set by whoever runs it
  }

  /**
   * Publishes `event` from this handler, as client.publish() does (docs/guides/events.md): by
   * default within the time this call has left, and in its trace (a PRODUCER span under its
   * span, from a worker thread too).
   */
  publish (event, payload, options) {
    return this.publisher.publish(event, payload, this.eventOptions(options), this.trace)
  }

  /** Broadcasts `event` from this handler, as client.broadcast() does, by the same defaults. */
  broadcast (event, payload, options) {
    return this.publisher.broadcast(event, payload, this.eventOptions(options), this.trace)
  }

  /** An event's options, its timeout this call's time left when it gives none (and has a deadline). */
  eventOptions (options) {
    if (options?.timeout !== undefined || this.deadline === Infinity) return options
    return { ...options, timeout: Math.max(1, Math.floor(this.remaining())) }
  }

  /** A durable event's id (zeromesh/jetstream: its Nats-Msg-Id), or null: handlers are idempotent on it. */
  get eventId () {
    return this.headers[EVENT_ID_HEADER] ?? null
  }

  /** How many times the durable log delivered this event, this time included (0: not a durable event). */
  get deliveries () {
    return Number(this.headers[DELIVERIES_HEADER] ?? 0)
  }

  /** The client cancelled (or the work was stopped from outside): the signal aborts (now, or when first read), and its deadline timer goes. */
  cancel () {
    this.cancelled = true
    this.cancelledAt = this._clock.now()
    this._ac?.abort(new Error('cancelled by the client'))
    this.done()
    this.runner?.cancel()
  }

  /** The SERVER span's context as the propagator writes it, or null when not traced (docs/guides/observing.md). */
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

  /** How long ago, at `now`, its signal aborted (or would have: the cancel or the deadline); negative before. */
  abortedFor (now) {
    return now - (this.cancelled ? this.cancelledAt : this.deadline)
  }

  done () {
    if (this._timer !== null) this._clock.clearTimeout(this._timer)
  }
}

/** A handoffDeadline() as a deadline on this thread's performance.now() (Infinity for 0). */
export function threadDeadline (at) {
  return at > 0 ? at - performance.timeOrigin : Infinity
}
