// OpenTelemetry traces across hops (README, Observing it): with a tracer provider, a context
// manager and the W3C propagator registered, as an application would, a request makes a CLIENT
// span on the client and a SERVER span on the peer, children of one another across hops, on the
// main thread and in worker threads; spans name the method and the server, never arguments or
// results; errors set their status. Without a provider nothing is sent or made. Real peers on
// real sockets, spans from sdk-trace-base's in-memory exporter.
import { expect } from 'chai'
import { trace, context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, SamplingDecision } from '@opentelemetry/sdk-trace-base'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { encodeRequest, decode } from '../../protocol/index.js'
import { encodeStreamOpen } from '../../protocol/stream-codec.js'
import { traceCarrier, UNSAMPLED_TRACE } from '../../protocol/validate.js'
import { Limits } from '../../protocol/constants.js'
import { answerDraining, wrapSends } from '../helpers/insides.js'

const TRACED = new URL('../fixtures/traced.js', import.meta.url)
const SECRET = 'secret-argument-7f3a'

function register () {
  const exporter = new InMemorySpanExporter()
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  return exporter
}

function unregister () {
  trace.disable()
  context.disable()
  propagation.disable()
}

const portOf = (endpoint) => Number(endpoint.slice(endpoint.lastIndexOf(':') + 1))
const idOf = (s) => s.spanContext().spanId
const parentOf = (s) => s.parentSpanContext?.spanId ?? null
const traceOf = (s) => s.spanContext().traceId

/** The one finished span named `name` of `kind`. */
function only (spans, name, kind) {
  const found = spans.filter((s) => s.name === name && s.kind === kind)
  expect(found, `${name} spans of kind ${kind}: ${spans.map((s) => `${s.name}/${s.kind}`).join(', ')}`).to.have.length(1)
  return found[0]
}

describe('tracing across hops', function () {
  this.timeout(20000)
  const h = harness()
  let exporter
  beforeEach(() => { exporter = register() })
  afterEach(async () => {
    await h.cleanup()
    unregister()
  })

  it('continues one trace client -> peer A -> (its handler calls) peer B, with rpc.* attributes and no arguments or results', async () => {
    const b = await h.peer({ handlers: { leaf: (args) => ({ echoed: args.secret }) } })
    const inner = h.client({ seeds: [b.endpoint] })
    const a = await h.peer({ handlers: { hop: async (args) => { await new Promise((resolve) => setTimeout(resolve, 5)); return inner.request('leaf', args) } } })
    const c = h.client({ seeds: [a.endpoint] })
    const tracer = trace.getTracer('test')
    const out = await tracer.startActiveSpan('root', async (root) => {
      try { return await c.request('hop', { secret: SECRET }) } finally { root.end() }
    })
    expect(out).to.deep.equal({ echoed: SECRET })
    const spans = await eventually(() => { const s = exporter.getFinishedSpans(); expect(s).to.have.length(5); return s })
    const root = only(spans, 'root', SpanKind.INTERNAL)
    const hopClient = only(spans, 'hop', SpanKind.CLIENT)
    const hopServer = only(spans, 'hop', SpanKind.SERVER)
    const leafClient = only(spans, 'leaf', SpanKind.CLIENT)
    const leafServer = only(spans, 'leaf', SpanKind.SERVER)
    for (const s of spans) expect(traceOf(s)).to.equal(traceOf(root))
    expect(parentOf(hopClient)).to.equal(idOf(root))
    expect(parentOf(hopServer)).to.equal(idOf(hopClient))
    expect(parentOf(leafClient)).to.equal(idOf(hopServer)) // the handler's active context is its SERVER span
    expect(parentOf(leafServer)).to.equal(idOf(leafClient))
    expect(hopClient.attributes).to.include({ 'rpc.system': 'zeromesh', 'rpc.method': 'hop', 'server.address': '127.0.0.1', 'server.port': portOf(a.endpoint), 'zeromesh.attempts': 1 })
    expect(hopServer.attributes).to.include({ 'rpc.system': 'zeromesh', 'rpc.method': 'hop', 'server.address': '127.0.0.1', 'server.port': portOf(a.endpoint) })
    expect(leafServer.attributes).to.include({ 'rpc.method': 'leaf', 'server.port': portOf(b.endpoint) })
    expect(hopClient.events).to.deep.equal([]) // one attempt, answered: nothing to tell beyond the attributes
    for (const s of spans) {
      expect(s.status.code).to.not.equal(SpanStatusCode.ERROR)
      expect(JSON.stringify([s.attributes, s.events])).to.not.include(SECRET)
    }
  })

  it('sets the status of both spans when the handler fails, and names the peer that answered a failed-over call', async () => {
    const a = await h.peer({ handlers: { boom: () => { throw Object.assign(new Error('it broke'), { code: 'E_BROKE' }) } } })
    const c = h.client({ seeds: [a.endpoint] })
    await rejectsWith(c.request('boom'), 'ERR_ZEROMESH_REMOTE')
    const spans = await eventually(() => { const s = exporter.getFinishedSpans(); expect(s).to.have.length(2); return s })
    const client = only(spans, 'boom', SpanKind.CLIENT)
    const server = only(spans, 'boom', SpanKind.SERVER)
    expect(client.status).to.include({ code: SpanStatusCode.ERROR })
    expect(client.attributes).to.include({ 'error.type': 'ERR_ZEROMESH_REMOTE', 'zeromesh.remote_code': 'E_BROKE' })
    expect(server.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'it broke' })
    expect(server.attributes).to.include({ 'error.type': 'E_BROKE' })

    // A peer that answers DRAINING: the call moves to the other, and the span says so.
    exporter.reset()
    const b = await h.peer({ handlers: { boom: () => 'fine' } })
    const d = await h.peer({ handlers: { boom: () => 'never' } })
    answerDraining(d) // answers DRAINING, as a stopping peer does, and stays up
    const first = { select: (peers) => peers.find((p) => p.endpoint === d.endpoint) ?? peers[0] } // d while it may be chosen
    const c2 = h.client({ seeds: [d.endpoint, b.endpoint], strategy: first, discover: false })
    await eventually(() => expect(c2.peers().filter((p) => p.state === 'up')).to.have.length(2))
    expect(await c2.request('boom')).to.equal('fine') // not idempotent: DRAINING says it never ran
    const moved = await eventually(() => only(exporter.getFinishedSpans(), 'boom', SpanKind.CLIENT))
    expect(moved.status.code).to.not.equal(SpanStatusCode.ERROR)
    expect(moved.attributes).to.include({ 'server.port': portOf(b.endpoint), 'zeromesh.attempts': 1 }) // a drain is not an attempt (as busy is not)
    expect(moved.events.map((e) => [e.name, e.attributes['server.port'], e.attributes['zeromesh.status'], e.attributes['zeromesh.attempt']])).to.deep.equal([
      ['refused', portOf(d.endpoint), 'DRAINING', undefined],
      ['retry', portOf(b.endpoint), undefined, 1], // the draining peer took nothing: b's is the call's first attempt
    ])
  })

  it('runs a worker thread\'s handler inside the SERVER span, and ctx.trace lets code in the thread continue it', async () => {
    const p = await h.peer({ handlers: TRACED, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    const out = await c.request('threadWork', { secret: SECRET })
    const spans = await eventually(() => { const s = exporter.getFinishedSpans(); expect(s).to.have.length(2); return s })
    const client = only(spans, 'threadWork', SpanKind.CLIENT)
    const server = only(spans, 'threadWork', SpanKind.SERVER)
    expect(parentOf(server)).to.equal(idOf(client))
    expect(out.traceId).to.equal(traceOf(client))
    expect(out.parentSpanId).to.equal(idOf(server)) // the thread's span is a child of the SERVER span
    expect(out.carried.traceparent).to.equal(`00-${traceOf(server)}-${idOf(server)}-01`)

    exporter.reset()
    await rejectsWith(c.request('threadFail'), 'ERR_ZEROMESH_REMOTE')
    const failed = await eventually(() => only(exporter.getFinishedSpans(), 'threadFail', SpanKind.SERVER))
    expect(failed.status).to.include({ code: SpanStatusCode.ERROR, message: 'failed in a thread' })
    expect(failed.attributes).to.include({ 'error.type': 'E_THREAD' })
  })

  it('traces events: a delivery is a PRODUCER span, its handler\'s run a CONSUMER span under it; a handler in a thread publishes under its SERVER span', async () => {
    const sub = await h.peer({ events: { 'traced.placed': { group: 'audit', handler: () => {} } } })
    const p = await h.peer({ seeds: [sub.endpoint], handlers: TRACED, threads: 1 })
    const c = h.client({ seeds: [sub.endpoint] })
    await c.publish('traced.placed', { secret: SECRET })
    let spans = await eventually(() => { const s = exporter.getFinishedSpans(); expect(s).to.have.length(2); return s })
    const producer = only(spans, 'traced.placed', SpanKind.PRODUCER)
    const consumer = only(spans, 'traced.placed', SpanKind.CONSUMER)
    expect(parentOf(consumer)).to.equal(idOf(producer))
    expect(JSON.stringify([producer.attributes, consumer.attributes])).to.not.include(SECRET)

    exporter.reset()
    const c2 = h.client({ seeds: [p.endpoint] })
    expect(await c2.request('threadPublish')).to.deep.equal(['audit'])
    spans = await eventually(() => { const s = exporter.getFinishedSpans(); expect(s).to.have.length(4); return s })
    const server = only(spans, 'threadPublish', SpanKind.SERVER)
    const fromThread = only(spans, 'traced.placed', SpanKind.PRODUCER)
    expect(parentOf(fromThread)).to.equal(idOf(server)) // the thread's publish continues its call's trace
    expect(parentOf(only(spans, 'traced.placed', SpanKind.CONSUMER))).to.equal(idOf(fromThread))
  })

  it('traces streams: a generator\'s code runs in its SERVER span, on the main thread and in a thread', async () => {
    const b = await h.peer({ handlers: { leaf: () => 'leaf' } })
    const inner = h.client({ seeds: [b.endpoint] })
    const a = await h.peer({
      handlers: {
        async * items () {
          await new Promise((resolve) => setTimeout(resolve, 5))
          yield await inner.request('leaf')
          yield 'two'
        },
      },
    })
    const c = h.client({ seeds: [a.endpoint] })
    const got = []
    for await (const item of c.stream('items')) got.push(item)
    expect(got).to.deep.equal(['leaf', 'two'])
    const spans = await eventually(() => { const s = exporter.getFinishedSpans(); expect(s).to.have.length(4); return s })
    const client = only(spans, 'items', SpanKind.CLIENT)
    const server = only(spans, 'items', SpanKind.SERVER)
    expect(parentOf(server)).to.equal(idOf(client))
    expect(parentOf(only(spans, 'leaf', SpanKind.CLIENT))).to.equal(idOf(server))
    expect(client.attributes).to.include({ 'zeromesh.items': 2, 'server.port': portOf(a.endpoint), 'rpc.method': 'items' })
    expect(server.attributes).to.include({ 'zeromesh.items': 2 })

    exporter.reset()
    const p = await h.peer({ handlers: TRACED, threads: 1 })
    const ct = h.client({ seeds: [p.endpoint] })
    const items = []
    for await (const x of ct.stream('threadItems')) items.push(x)
    const [item] = items
    const threadServer = await eventually(() => only(exporter.getFinishedSpans(), 'threadItems', SpanKind.SERVER))
    expect(item.parentSpanId).to.equal(idOf(threadServer))
    expect(item.traceId).to.equal(traceOf(threadServer))
  })

  it('a call not sampled makes no span on either side, sends the empty trace field, and its handler\'s own calls start no trace of their own (no orphan roots)', async () => {
    // A sampler that drops 'outer' when it is a root and records anything else: a call made
    // under an unsampled 'outer' that did not carry its decision would be recorded as a root.
    unregister()
    exporter = new InMemorySpanExporter()
    const byName = { shouldSample: (ctx, traceId, name) => ({ decision: name === 'outer' ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED }), toString: () => 'byName' }
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)], sampler: new ParentBasedSampler({ root: byName }) }))
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    const b = await h.peer({ handlers: { inner: (args, ctx) => ctx.trace } })
    const inner = h.client({ seeds: [b.endpoint] })
    const a = await h.peer({ handlers: { outer: async (args, ctx) => ({ here: ctx.trace, there: await inner.request('inner') }) } })
    const c = h.client({ seeds: [a.endpoint] })
    const sent = []
    wrapSends(c, (send) => (endpoint, frames, done) => { sent.push(decode(frames[0])); return send(endpoint, frames, done) })
    const out = await c.request('outer')
    expect(sent.flatMap((m) => m.requests ?? []).map((r) => r.trace)).to.deep.equal([{}]) // the empty map
    // ctx.trace, for code that continues the decision by hand (a worker thread): a traceparent not sampled.
    expect(out.here.traceparent).to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/)
    expect(out.there.traceparent).to.match(/-00$/)
    // A peer's reply ends its span before it leaves (dispatch.js): every span these calls could make has ended.
    expect(exporter.getFinishedSpans().map((x) => `${x.name}/${x.kind}`)).to.deep.equal([]) // 'inner' was recorded as a root before
    // A parent whose sampled flag is off makes no span either, and says so to the peer.
    const parent = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0, isRemote: true })
    sent.length = 0
    await context.with(parent, () => c.request('outer'))
    expect(sent.flatMap((m) => m.requests ?? []).map((r) => r.trace)).to.deep.equal([{}])
    expect(exporter.getFinishedSpans()).to.deep.equal([])
    // A sampled call records as before.
    await c.request('inner', null, { timeout: 1000 }).catch(() => {}) // a's peer does not serve it: an UNKNOWN_METHOD, recorded
    const named = await eventually(() => { const x = exporter.getFinishedSpans(); expect(x).to.not.deep.equal([]); return x })
    expect(named.map((x) => x.name)).to.include('inner')
    expect(new Set(named.map((x) => x.spanContext().traceId)).size, 'only the sampled call\'s trace: none of the others came late').to.equal(1)
  })

  it('a worker thread\'s handler of a call not sampled gets a ctx.trace whose traceparent is not sampled: code in the thread continues the decision', async () => {
    unregister()
    exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)], sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }) }))
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    const p = await h.peer({ handlers: TRACED, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    const out = await c.request('threadWork')
    expect(out.carried.traceparent).to.match(/-00$/)
    expect(out.recorded).to.equal(false) // the thread's own span, under it, is not sampled either (its provider's ParentBased default)
    expect(exporter.getFinishedSpans()).to.deep.equal([])
  })
})

describe('tracing off', function () {
  this.timeout(20000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('sends no trace field and makes no spans without a registered tracer provider, even inside an active context', async () => {
    const p = await h.peer({ handlers: { look: (args, ctx) => ctx.trace } })
    // A context manager and propagator alone (no provider): nothing to continue.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    try {
      const c = h.client({ seeds: [p.endpoint] })
      const sent = [] // what the client hands its transport
      wrapSends(c, (send) => (endpoint, frames, done) => { sent.push(decode(frames[0])); return send(endpoint, frames, done) })
      expect(await c.request('look')).to.equal(null)
      const got = []
      for await (const x of c.stream('look')) got.push(x)
      expect(got).to.deep.equal([null])
      const requests = sent.filter((m) => m.requests !== undefined).flatMap((m) => m.requests)
      const opens = sent.filter((m) => m.input !== undefined)
      expect(requests.map((r) => r.method)).to.deep.equal(['look'])
      expect(opens.map((m) => m.method)).to.deep.equal(['look'])
      for (const m of [...requests, ...opens]) expect(m.trace).to.equal(null)
    } finally {
      context.disable()
      propagation.disable()
    }
  })
})

describe('the trace field on the wire (PROTOCOL.md 4.1)', () => {
  it('carries a propagator\'s fields; an absent or broken field is null and the request is still served', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const req = (trace) => decode(encodeRequest([trace === undefined ? [1, 'm', null, 100] : [1, 'm', null, 100, trace]])).requests[0]
    expect(req(undefined)).to.include({ id: 1, trace: null })
    expect({ ...req({ traceparent: tp, tracestate: 'a=1' }).trace }).to.deep.equal({ traceparent: tp, tracestate: 'a=1' })
    const broken = [
      null, 'a string', [tp], { traceparent: 5 },
      Object.fromEntries(Array.from({ length: Limits.maxTraceFields + 1 }, (_, i) => [`k${i}`, 'v'])),
      { ['k'.repeat(Limits.maxTraceKeyLength + 1)]: 'v' },
      { traceparent: 'x'.repeat(Limits.maxTraceValueLength + 1) },
      { traceparent: { nested: tp } },
    ]
    for (const t of broken) {
      const r = req(t)
      expect(r, JSON.stringify(t)).to.include({ id: 1, method: 'm', trace: null })
    }
    expect(req({}).trace).to.equal(UNSAMPLED_TRACE) // the empty map: the caller did not sample its trace
    expect(traceCarrier({ __proto__: null, traceparent: tp })).to.deep.include({ traceparent: tp })
    expect(Object.getPrototypeOf(traceCarrier({ traceparent: tp }))).to.equal(null) // a carrier never reaches Object.prototype
    const open = decode(encodeStreamOpen(3, 's', null, 0, 16, 65536, false, { traceparent: tp }))
    expect({ ...open.trace }).to.deep.equal({ traceparent: tp })
    expect(decode(encodeStreamOpen(3, 's', null, 0, 16, 65536, false)).trace).to.equal(null)
  })
})
