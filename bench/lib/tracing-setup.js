// OpenTelemetry as an application sets it up, for bench/request-path/tracing.js: a tracer provider whose
// spans go through a BatchSpanProcessor to an exporter that drops them (the cost measured is
// zeromesh's and the SDK's, not an exporter's), the AsyncLocalStorage context manager and the
// W3C Trace Context propagator. A peer child gets it with `--import` (see tracingImport).
import { pathToFileURL } from 'node:url'
import { trace, context, propagation } from '@opentelemetry/api'
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'

const DROP = { export: (spans, done) => done({ code: 0 }), shutdown: () => Promise.resolve(), forceFlush: () => Promise.resolve() }

/**
 * Registers the provider, context manager and propagator in this process. `ratio`: the share
 * of new traces sampled (ParentBased(TraceIdRatioBased)); every span is recorded without it.
 */
export function startTracing (ratio = null) {
  const sampler = ratio === null ? undefined : new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(DROP)], sampler })
  trace.setGlobalTracerProvider(provider)
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  return provider
}

/** Unregisters them: zeromesh in this process traces nothing from here on. */
export async function stopTracing (provider) {
  trace.disable()
  context.disable()
  propagation.disable()
  await provider.shutdown()
}

/** The module to `--import` that starts tracing in a child process before its main module runs. */
export function tracingImport (ratio = null) {
  return `data:text/javascript,${encodeURIComponent(`import { startTracing } from ${JSON.stringify(pathToFileURL(new URL(import.meta.url).pathname).href)}; startTracing(${JSON.stringify(ratio)})`)}`
}

/** The context manager and the propagator alone, no tracer provider: an application's set-up before zeromesh traces anything. */
export function startContext () {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
}

export function stopContext () {
  context.disable()
  propagation.disable()
}

/** The module to `--import` that starts the context manager and propagator alone in a child process. */
export function contextImport () {
  return `data:text/javascript,${encodeURIComponent(`import { startContext } from ${JSON.stringify(pathToFileURL(new URL(import.meta.url).pathname).href)}; startContext()`)}`
}
