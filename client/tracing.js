// A CLIENT span per request or stream (docs/guides/observing.md), when @opentelemetry/api is
// installed and a tracer provider registered: from request() to the moment it settles, a child
// of the caller's active context. It names the peer that answered (`server.*`) and how many
// attempts it took; retries, hedges and refusals are events. Its context goes to the peer in
// the request's `trace` field. Spans never hold arguments or results. A plain call costs the
// span and one setAttributes at its end: nothing per attempt unless there is more than one.
//
// A call that is not sampled costs almost nothing: the decision is made once, at its start.
// When the caller's context carries a span context whose sampled flag is off, no span is made
// at all; otherwise one span is started (the API exposes no sampler: a non-recording span is
// how a root call learns the decision), and if it is not recording it is dropped there. Either
// way the call sends the empty trace field (UNSAMPLED_TRACE, PROTOCOL.md 4.1), so the peer
// records nothing and its handler's own calls continue the decision.
import { otel, TracerSource, injectContext, serverAttributes, endSpan, unsampledParent, UNSAMPLED_TRACE } from '../protocol/trace-context.js'
import { Status, statusNames } from '../protocol/constants.js'

const MAX_ENDPOINTS = 1024 // endpoints whose span attributes are kept parsed

export class ClientTracing {
  constructor () {
    this.source = new TracerSource()
    this.servers = new Map() // endpoint -> { attributes: its server.*, once: those with zeromesh.attempts 1 }
  }

  /**
   * Starts `call`'s span (call.span) and sets the trace field its attempts carry (call.trace),
   * if a tracer is registered; for a call not sampled, only the trace field that says so.
   */
  start (call) {
    const tracer = this.source.get()
    if (tracer === null) return
    const parent = otel.context.active()
    if (unsampledParent(parent)) { call.trace = UNSAMPLED_TRACE; return }
    const span = tracer.startSpan(call.method, { kind: call.kind.producer === true ? otel.SpanKind.PRODUCER : otel.SpanKind.CLIENT }, parent) // an event's delivery produces it
    if (!span.isRecording()) { call.trace = UNSAMPLED_TRACE; return } // the sampler said no: nothing more
    span.setAttributes({ 'rpc.system': 'zeromesh', 'rpc.method': call.method })
    call.span = new ClientSpan(span)
    call.trace = injectContext(otel.trace.setSpan(parent, span))
  }

  /** An attempt (or, with `hedge`, a hedged copy) left for `endpoint`: the span names it as its server until an answer says otherwise. */
  attempt (call, endpoint, hedge) {
    const s = call.span
    if (hedge || s.server !== null) s.span.addEvent(hedge ? 'hedge' : 'retry', { ...this.server(endpoint).attributes, 'zeromesh.attempt': call.attempts })
    if (!hedge) s.server = endpoint
  }

  /** `endpoint` answered with `status`: a refusal is an event; an answer names its server. */
  reply (call, endpoint, status) {
    const s = call.span
    if (status === Status.BUSY || status === Status.DRAINING || status === Status.UNKNOWN_METHOD) {
      s.span.addEvent('refused', { ...this.server(endpoint).attributes, 'zeromesh.status': statusNames[status] })
    } else {
      s.server = endpoint
    }
  }

  /** The call (or stream, with the `items` it read) settled: its span ends, failed by `err` or OK. */
  end (call, err, items) {
    const span = call.span.span
    const server = call.span.server
    if (server !== null) span.setAttributes(call.attempts === 1 ? this.server(server).once : { ...this.server(server).attributes, 'zeromesh.attempts': call.attempts })
    else span.setAttribute('zeromesh.attempts', call.attempts)
    if (items !== undefined) span.setAttribute('zeromesh.items', items)
    if (err === null) return endSpan(span)
    if (typeof err.remoteCode === 'string') span.setAttribute('zeromesh.remote_code', err.remoteCode)
    endSpan(span, typeof err.code === 'string' ? err.code : (err.name ?? 'Error'), err.message ?? String(err))
  }

  server (endpoint) {
    let s = this.servers.get(endpoint)
    if (s === undefined) {
      if (this.servers.size >= MAX_ENDPOINTS) this.servers.clear()
      const attributes = serverAttributes(endpoint)
      // `once`: the attributes of a call answered at its first attempt, made once (most calls end so).
      this.servers.set(endpoint, s = { attributes, once: { ...attributes, 'zeromesh.attempts': 1 } })
    }
    return s
  }
}

class ClientSpan {
  constructor (span) {
    this.span = span
    this.server = null // the endpoint of the attempt that counts: the last one sent, or the one that answered
  }
}
