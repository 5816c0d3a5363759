// NestJS's own microservice specs as its repository writes them for the broker transports
// (integration/microservices: the multicast and broadcast controllers), on zeromesh/nest: an
// HTTP application whose controller calls send() through a ClientsModule client, two servers
// that each answer with an Observable that emits once and never completes, and the caller's
// pipe (scan, take(2)) ends the call. Only the transport's options differ from Nest's specs:
// the client's `all: true` is what a broker transport does to every send().
import 'reflect-metadata'
import { expect } from 'chai'
import { NestFactory } from '@nestjs/core'
import { Module, Controller, Get, Inject, UsePipes, StandardSchemaValidationPipe } from '@nestjs/common'
import { ClientsModule, MessagePattern, EventPattern, Payload } from '@nestjs/microservices'
import { z } from 'zod'
import { trace, context, propagation, SpanKind } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { Observable, scan, take, lastValueFrom } from 'rxjs'
import { ZeromeshServer, ZeromeshClient, ZeromeshRecord, invalidInput } from 'zeromesh/nest'
import { InvalidInputError } from 'zeromesh'
import { eventually } from '../helpers/eventually.js'

class SpecController {
  constructor (client) { this.client = client }
  multicast () { return this.client.send({ cmd: 'multicast' }, {}).pipe(scan((a, b) => a + b), take(2)) }
  broadcast () { return this.client.send('broadcast', {}).pipe(scan((a, b) => a + b), take(2)) }
  replyMulticast () { return new Observable((observer) => observer.next(1)) }
  replyBroadcast () { return new Observable((observer) => observer.next(1)) }
  placed () {}
  traced () { return trace.getTracer('spec').startActiveSpan('inner', (span) => { span.end(); return 'ok' }) }
  order (order) { return { total: order.qty * order.price, coupon: order.coupon } }
}
const method = (name) => Object.getOwnPropertyDescriptor(SpecController.prototype, name)
Reflect.decorate([Get('multicast')], SpecController.prototype, 'multicast', method('multicast'))
Reflect.decorate([Get('broadcast')], SpecController.prototype, 'broadcast', method('broadcast'))
Reflect.decorate([MessagePattern({ cmd: 'multicast' })], SpecController.prototype, 'replyMulticast', method('replyMulticast'))
Reflect.decorate([MessagePattern('broadcast')], SpecController.prototype, 'replyBroadcast', method('replyBroadcast'))
Reflect.decorate([EventPattern('orders.placed')], SpecController.prototype, 'placed', method('placed'))
Reflect.decorate([MessagePattern('order'), UsePipes(new StandardSchemaValidationPipe({ exceptionFactory: invalidInput }))], SpecController.prototype, 'order', method('order'))
Payload({ schema: z.object({ qty: z.coerce.number().int().positive(), price: z.number(), coupon: z.string().default('none') }) })(SpecController.prototype, 'order', 0)
Reflect.decorate([MessagePattern('traced')], SpecController.prototype, 'traced', method('traced'))
Inject('MESH')(SpecController, undefined, 0)
Controller()(SpecController)

/** The spec's module: the controller, and a ClientsModule client of zeromesh/nest with `options`. */
function specModule (options) {
  class SpecModule {}
  Module({ imports: [ClientsModule.register([{ name: 'MESH', customClass: ZeromeshClient, options }])], controllers: [SpecController] })(SpecModule)
  return SpecModule
}

describe("NestJS's own microservice specs on zeromesh/nest", function () {
  this.timeout(30000)
  const apps = []
  afterEach(async () => { for (const a of apps.splice(0).reverse()) await a.close() })

  /** Two servers of the spec's module (the second seeded with the first), and the HTTP app calling them with client `options`. */
  async function specApp (options = {}) {
    const servers = []
    for (let i = 0; i < 2; i++) {
      const server = new ZeromeshServer({ bind: 'tcp://127.0.0.1:0', ...(i === 0 ? {} : { seeds: [servers[0].unwrap().endpoint] }) })
      const ms = await NestFactory.createMicroservice(specModule({ seeds: ['tcp://127.0.0.1:1'] }), { strategy: server, logger: false })
      apps.push(ms)
      await ms.listen()
      servers.push(server)
    }
    const seeds = servers.map((s) => s.unwrap().endpoint)
    const app = await NestFactory.create(specModule({ seeds, timeout: 5000, ...options }), { logger: false })
    apps.push(app)
    await app.listen(0, '127.0.0.1')
    const client = app.get('MESH')
    await eventually(() => expect(client.unwrap().peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(2))
    return { url: await app.getUrl(), servers, client }
  }

  for (const route of ['multicast', 'broadcast']) {
    it(`${route[0].toUpperCase()}${route.slice(1)} (2 subscribers): GET /${route} gives 2, one value from each server, and both servers' places are freed`, async () => {
      const { url, servers } = await specApp({ all: true })
      const res = await fetch(`${url}/${route}`)
      expect(res.status).to.equal(200)
      expect(await res.text()).to.equal('2')
      await eventually(() => expect(servers.map((s) => s.unwrap().stats().inflight)).to.deep.equal([0, 0])) // take(2) unsubscribed: both ended
    })
  }

  it('without all, send() goes to one server, as Nest\'s TCP transport does (a never-completing Observable then ends at the deadline); a record\'s all: false overrides the client\'s all: true', async () => {
    for (const [options, record] of [[{}, {}], [{ all: true }, { all: false }]]) {
      const { client, servers } = await specApp(options)
      const before = servers.map((s) => s.unwrap().stats().requests)
      let err = null
      try { await lastValueFrom(client.send({ cmd: 'multicast' }, new ZeromeshRecord({}, { timeout: 300, idempotent: false, ...record }))) } catch (e) { err = e }
      expect(err?.code).to.equal('ERR_ZEROMESH_TIMEOUT')
      expect(servers.map((s, i) => s.unwrap().stats().requests - before[i]).sort()).to.deep.equal([0, 1])
    }
    expect(() => new ZeromeshClient({ seeds: ['tcp://127.0.0.1:1'], all: 'yes' })).to.throw(/all must be true or false/)
  })

  it("Nest 12's StandardSchemaValidationPipe on a zeromesh/nest payload: a valid one reaches the handler as the schema made it, an invalid one is refused with its issues", async () => {
    const { client } = await specApp()
    expect(await lastValueFrom(client.send('order', { qty: '3', price: 2 }))).to.deep.equal({ total: 6, coupon: 'none' }) // coerced, defaulted
    let err = null
    try { await lastValueFrom(client.send('order', { qty: -1, price: 'x' })) } catch (e) { err = e }
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(err.issues.map((i) => i.path)).to.deep.equal([['qty'], ['price']])
    expect(err.message).to.match(/^invalid input: qty: .+; price: .*expected number/)
  })

  it('spans for send(), emit() and the handler, in one trace (the OpenTelemetry SDK\'s in-memory exporter)', async () => {
    const exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    try {
      const { client } = await specApp()
      await trace.getTracer('spec').startActiveSpan('root', async (root) => {
        expect(await lastValueFrom(client.send('traced', {}))).to.equal('ok')
        await lastValueFrom(client.emit('orders.placed', {}))
        root.end()
      })
      const spans = exporter.getFinishedSpans()
      const one = (name, kind) => {
        const found = spans.filter((x) => x.name === name && x.kind === kind)
        expect(found, `${name}/${kind} among ${spans.map((x) => `${x.name}/${x.kind}`).join(', ')}`).to.have.length(name === 'orders.placed' ? 2 : 1) // emit: each server instance is a group of its own, one delivery each
        return found[0]
      }
      const id = (x) => x.spanContext().spanId
      const parent = (x) => x.parentSpanContext?.spanId
      const root = one('root', SpanKind.INTERNAL)
      const sent = one('traced', SpanKind.CLIENT)
      const served = one('traced', SpanKind.SERVER)
      expect(parent(sent)).to.equal(id(root))
      expect(parent(served)).to.equal(id(sent))
      expect(parent(one('inner', SpanKind.INTERNAL))).to.equal(id(served))
      one('orders.placed', SpanKind.PRODUCER)
      one('orders.placed', SpanKind.CONSUMER)
      const produced = spans.filter((x) => x.name === 'orders.placed' && x.kind === SpanKind.PRODUCER)
      for (const p of produced) expect(parent(p)).to.equal(id(root))
      const consumedBy = spans.filter((x) => x.name === 'orders.placed' && x.kind === SpanKind.CONSUMER).map(parent).sort()
      expect(consumedBy).to.deep.equal(produced.map(id).sort()) // each delivery's handler under its PRODUCER span
      expect(new Set(spans.map((x) => x.spanContext().traceId)).size).to.equal(1)
    } finally {
      trace.disable()
      context.disable()
      propagation.disable()
    }
  })

  it('an emit() naming a group no server uses fails saying how servers name their groups and what to write', async () => {
    const { client } = await specApp()
    let err = null
    try { await lastValueFrom(client.emit('orders.placed', new ZeromeshRecord({}, { groups: ['billing'], timeout: 500 }))) } catch (e) { err = e }
    expect(err?.code).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
    expect(err.message).to.include('"billing"')
    expect(err.message).to.match(/orders\.placed@[0-9a-f]{8}/) // the groups that do subscribe
    expect(err.message).to.include("new ZeromeshServer({ group: 'billing' })")
    expect(err.message).to.include("@EventPattern('orders.placed', { group: 'billing' })")
  })
})
