// Trace context through OpenTelemetry's API, loaded when it is installed (the wire's `trace`
// field is checked by validate.js traceCarrier, PROTOCOL.md 4.1). `@opentelemetry/api`
// is an optional peer dependency: without it, or without a registered tracer provider,
// zeromesh makes no spans and sends no trace field.
//
// It is loaded with require(), not a top-level `await import()`: a module graph with a
// top-level await cannot be require()d, and CommonJS users (NestJS compiled to CommonJS
// included) load zeromesh with require(). `@opentelemetry/api` publishes CommonJS, and its
// globals (the registered provider, propagator, context manager) are shared by every copy of
// it in a process, so the copy required here is the one the user's SDK registered with.
import { createRequire } from 'node:module'
import { VERSION } from './version.js'
import { parseEndpoint } from './endpoint.js'
import { UNSAMPLED_TRACE } from './validate.js'

export { UNSAMPLED_TRACE }

const OTEL = '@opentelemetry/api'

/** `@opentelemetry/api` as `load` finds it, or null when it is not installed (any other failure is thrown). */
export function loadOptional (load = createRequire(import.meta.url)) {
  try {
    return load(OTEL)
  } catch (err) {
    if (err?.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${OTEL}'`)) return null
    throw err
  }
}

const api = loadOptional()

/** `@opentelemetry/api`, or null when it is not installed. */
export const otel = api

// The provider the global API hands out when none is registered (its proxy's delegate).
const NOOP_PROVIDER = api === null ? null : new api.ProxyTracerProvider().getDelegate()

/**
 * The zeromesh tracer of the globally registered tracer provider, or null when none is (then
 * no span is made: a request pays for this check only). Follows the provider if it changes.
 */
export class TracerSource {
  constructor () {
    this.provider = null
    this.tracer = null
  }

  get () {
    if (api === null) return null
    const p = api.trace.getTracerProvider()
    const provider = typeof p.getDelegate === 'function' ? p.getDelegate() : p
    if (provider === NOOP_PROVIDER) return null
    if (provider !== this.provider) {
      this.provider = provider
      this.tracer = provider.getTracer('zeromesh', VERSION)
    }
    return this.tracer
  }
}

/** The context a propagator's carrier (a `trace` field, or ctx.trace in a worker thread) continues. */
export function extractContext (carrier) {
  return api.propagation.extract(api.context.active(), carrier)
}

/**
 * What the global propagator writes for `context` (whose span is the parent of what follows),
 * or null when it writes nothing (no propagator registered).
 */
export function injectContext (context) {
  const carrier = {}
  api.propagation.inject(context, carrier)
  for (const k in carrier) return carrier // eslint-disable-line no-unreachable-loop
  return null
}

/**
 * `server.address` and `server.port` of an endpoint, as span attributes (parseEndpoint's host
 * and port; an ipc or inproc endpoint, which has neither, is its own address).
 */
export function serverAttributes (endpoint) {
  const p = parseEndpoint(endpoint)
  if (p.error !== undefined || p.host === null) return { 'server.address': endpoint }
  return { 'server.address': p.host.startsWith('[') ? p.host.slice(1, -1) : p.host, 'server.port': p.port }
}

/**
 * Whether `context` holds a span context its sampler decided not to record (its sampled flag
 * off): a call in it records nothing, and says so to the peer (UNSAMPLED_TRACE).
 */
export function unsampledParent (context) {
  const sc = api.trace.getSpanContext(context)
  return sc !== undefined && (sc.traceFlags & api.TraceFlags.SAMPLED) === 0
}

/** Whether a received carrier names a parent not sampled: a W3C `traceparent` whose flags have the sampled bit off. */
export function unsampledCarrier (carrier) {
  const tp = carrier.traceparent
  return typeof tp === 'string' && tp.length === 55 && (parseInt(tp.slice(53), 16) & 1) === 0
}

// The context a handler runs in when its caller's trace is not sampled (UNSAMPLED_TRACE): a
// remote span context of fixed ids, its sampled flag off, so the handler's own calls (a client,
// a ParentBased sampler) record nothing either and start no trace of their own. Made once.
const UNSAMPLED_TRACE_ID = '7a65726f6d657368756e73616d706c65' // "zeromeshunsample"
const UNSAMPLED_SPAN_ID = '7a65726f6d657368' // "zeromesh"
let unsampled = null

/** The context a handler of an unsampled call runs in, and its carrier (ctx.trace, for a worker thread). */
export function unsampledRun () {
  if (unsampled === null) {
    const context = api.trace.setSpan(api.ROOT_CONTEXT, api.trace.wrapSpanContext({ traceId: UNSAMPLED_TRACE_ID, spanId: UNSAMPLED_SPAN_ID, traceFlags: api.TraceFlags.NONE, isRemote: true }))
    unsampled = { context, carrier: null, propagator: null }
  }
  return unsampled
}

/** Ends `span`: OK, or failed (`errorType` as its `error.type`, `message` as its status). */
export function endSpan (span, errorType = null, message = '') {
  if (errorType !== null) {
    span.setAttribute('error.type', errorType)
    span.setStatus({ code: api.SpanStatusCode.ERROR, message })
  }
  span.end()
}
