// A SERVER span per request or stream a handler runs (docs/guides/observing.md), when
// @opentelemetry/api is installed and a tracer provider registered: a child of the client's span
// (the request's `trace` field, through the global propagator), active while the handler runs,
// so a client it calls continues the trace. A handler on a worker thread runs inside the span
// of the main thread that hands it over; `ctx.trace` carries the span's context to it. Spans
// never hold arguments or results.
//
// A call its client did not sample (the empty trace field, PROTOCOL.md 4.1; or a traceparent
// whose sampled flag is off) gets no span: its handler runs in a context whose span context is
// not sampled either (trace-context.js unsampledRun; a caller's own ids when it sent them), so
// the handler's own calls record nothing and start no trace of their own; `ctx.trace` carries
// that context to a worker thread.
import { otel, TracerSource, extractContext, injectContext, serverAttributes, endSpan, unsampledCarrier, unsampledRun, UNSAMPLED_TRACE } from '../protocol/trace-context.js'
import { Status, statusNames } from '../protocol/constants.js'

export class PeerTracing {
  constructor () {
    this.source = new TracerSource()
    this.endpoint = null
    this.address = null // the peer's own server.address and server.port (null for ipc and inproc)
    this.port = null
  }

  /**
   * Starts the SERVER span of `req` (`{ method, trace }`) for `ctx` (whose `trace` then gives
   * the span's context as the propagator writes it), or returns null when no tracer is
   * registered.
   */
  start (req, ctx) {
    const tracer = this.source.get()
    if (tracer === null) return null
    const t = req.trace
    if (t === UNSAMPLED_TRACE) return (ctx.traced = UNSAMPLED)
    if (t != null && unsampledCarrier(t)) return (ctx.traced = new Unsampled(extractContext(t), t))
    if (ctx.endpoint !== this.endpoint) {
      const a = serverAttributes(this.endpoint = ctx.endpoint)
      this.address = a['server.address']
      this.port = a['server.port'] ?? null
    }
    const parent = req.trace == null ? otel.context.active() : extractContext(req.trace)
    const attributes = this.port === null
      ? { 'rpc.system': 'zeromesh', 'rpc.method': req.method, 'server.address': this.address }
      : { 'rpc.system': 'zeromesh', 'rpc.method': req.method, 'server.address': this.address, 'server.port': this.port }
    const span = tracer.startSpan(req.method, { kind: ctx.kind === 'event' ? otel.SpanKind.CONSUMER : otel.SpanKind.SERVER, attributes }, parent) // an event's handler consumes it
    return (ctx.traced = new ServerSpan(span, otel.trace.setSpan(parent, span)))
  }
}

/**
 * Runs `fn` with the span context `carrier` names (a ctx.trace, as the propagator wrote it)
 * active, so the spans it starts are its children; `fn` as it is without one.
 */
export function underTrace (carrier, fn) {
  return carrier == null || otel === null ? fn() : otel.context.with(extractContext(carrier), fn)
}

/**
 * What runs a call its client did not sample: no span, the handler in a context not sampled
 * (`context`: the caller's, extracted; null: the one shared context of unsampledRun(), made
 * when first used). The same calls as ServerSpan's, each doing only that.
 */
class Unsampled {
  constructor (context, carrier) {
    this.context = context
    this.written = carrier // the context as the propagator writes it (ctx.trace), or undefined until asked for
  }

  get active () {
    return this.context ?? unsampledRun().context
  }

  carrier () {
    if (this.written !== undefined) return this.written
    if (this.context !== null) return (this.written = injectContext(this.context))
    const shared = unsampledRun()
    if (shared.carrier === null) shared.carrier = injectContext(shared.context)
    return shared.carrier
  }

  run (fn, args, ctx) {
    return otel.context.with(this.active, fn, undefined, args, ctx)
  }

  replying (reply) {
    return reply
  }

  bind (source) {
    return bindTo(this.active, source)
  }

  endWith () {}
}

const UNSAMPLED = new Unsampled(null, undefined) // every call whose client sent the empty trace field

class ServerSpan {
  constructor (span, active) {
    this.span = span
    this.active = active // the context the handler runs in
    this.written = undefined
  }

  /** The span's context as the propagator writes it (ctx.trace), made when first asked for. */
  carrier () {
    if (this.written === undefined) this.written = injectContext(this.active)
    return this.written
  }

  /** Calls fn(args, ctx) with the span as the active context. */
  run (fn, args, ctx) {
    return otel.context.with(this.active, fn, undefined, args, ctx)
  }

  /** `reply` that ends the span with the outcome of the reply entry it is given (null: cancelled). */
  replying (reply) {
    return (entry) => {
      this.endWith(entry === null ? Status.REMOTE : entry[1], entry === null ? ['cancelled by the client', 'CANCELLED'] : entry[2])
      reply(entry)
    }
  }

  /** A stream's items (an async iterator) pulled with the span as the active context: a generator's code runs in it. */
  bind (source) {
    return bindTo(this.active, source)
  }

  /** Ends the span: OK, or failed with a REPLY status and its `[message, code]`; a stream's with the `items` it sent. */
  endWith (status, value, items) {
    if (items !== undefined) this.span.setAttribute('zeromesh.items', items)
    if (status === Status.OK || status === Status.VALUES) return endSpan(this.span)
    const type = typeof value?.[1] === 'string' ? value[1] : (statusNames[status] ?? 'REMOTE')
    endSpan(this.span, type, typeof value?.[0] === 'string' ? value[0] : type)
  }
}

/** `source` (an async iterator) pulled with `active` as the active context: a generator's code runs in it. */
function bindTo (active, source) {
  const call = (name, v) => typeof source[name] === 'function' ? otel.context.with(active, () => source[name](v)) : Promise.resolve({ value: v, done: true })
  return { next: (v) => call('next', v), return: (v) => call('return', v), throw: (e) => call('throw', e), [Symbol.asyncIterator] () { return this } }
}
