// Trace context through OpenTelemetry's API, loaded when it is installed (the wire's `trace`
// field is checked by validate.js traceCarrier, PROTOCOL.md 4.1). `@opentelemetry/api`
// is an optional peer dependency: without it, or without a registered tracer provider,
// zeromesh makes no spans and sends no trace field.
import { VERSION } from './version.js'

let api = null
try {
  api = await import('@opentelemetry/api')
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err
}

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

/** `server.address` and `server.port` of an endpoint (tcp://host:port; ipc and inproc give the path). */
export function serverAttributes (endpoint, attributes) {
  const sep = endpoint.indexOf('://')
  const rest = sep < 0 ? endpoint : endpoint.slice(sep + 3)
  const colon = endpoint.startsWith('tcp://') ? rest.lastIndexOf(':') : -1
  if (colon < 0) {
    attributes['server.address'] = rest
  } else {
    const host = rest.slice(0, colon)
    attributes['server.address'] = host.startsWith('[') ? host.slice(1, -1) : host
    attributes['server.port'] = Number(rest.slice(colon + 1))
  }
  return attributes
}

/** Ends `span`: OK, or failed (`errorType` as its `error.type`, `message` as its status). */
export function endSpan (span, errorType = null, message = '') {
  if (errorType !== null) {
    span.setAttribute('error.type', errorType)
    span.setStatus({ code: api.SpanStatusCode.ERROR, message })
  }
  span.end()
}
