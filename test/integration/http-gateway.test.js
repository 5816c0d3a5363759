// zeromesh/http's gateway (issue 77, item 3) in front of real peers on loopback (in-process,
// real ZeroMQ sockets): its routes from contracts and from what the peers say they serve, a
// route mapped per operation, the contract's check before the call, deadlines from a header,
// errors by the code -> HTTP map (Retry-After on a 503), streams as server-sent events, its
// documents (checked by the outside validators), mounted on node:http and on Express.
import { expect } from 'chai'
import http from 'node:http'
import { once } from 'node:events'
import express from 'express'
import { z } from 'zod'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { contract, implement } from '../../index.js'
import { gateway } from '../../http/index.js'
import { openapiErrors, asyncapiErrors } from '../helpers/api-docs.js'

const orders = contract('orders', {
  version: '1.2.0',
  methods: {
    get: { input: z.object({ id: z.string().min(1), qty: z.coerce.number().int().positive().default(1) }), output: z.object({ id: z.string(), qty: z.number() }) },
    list: { input: z.object({ n: z.number().int().max(100) }), output: z.object({ i: z.number() }), stream: true },
  },
  events: { placed: z.object({ id: z.string() }) },
})

describe('the HTTP gateway (real peers on loopback)', function () {
  this.timeout(30000)
  const h = harness()
  const servers = []
  afterEach(async () => {
    for (const s of servers.splice(0)) { s.closeAllConnections(); s.close() }
    await h.cleanup()
  })

  /** `handler` on node:http at an ephemeral loopback port: its base URL. */
  async function listen (handler) {
    const server = http.createServer(handler)
    servers.push(server)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return `http://127.0.0.1:${server.address().port}`
  }
  const post = (url, body, headers = {}) => fetch(url, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } })

  async function ordersMesh () {
    const ran = { get: 0, list: 0, countdown: 0 }
    const wakers = [] // sleep's callers, woken by wake() before their time
    const peer = await h.peer({
      handlers: [
        implement(orders, {
          get: ({ id, qty }) => { ran.get++; return { id, qty } },
          async * list ({ n }) { ran.list++; for (let i = 0; i < n; i++) yield { i } },
        }, { events: [] }),
        { countdown: () => { ran.countdown++; return 'done' }, whoami: () => 'me', async * ticks ({ n }) { for (let i = 0; i < n; i++) { await new Promise((resolve) => setTimeout(resolve, 50)); yield i } }, sleep: ({ ms }) => new Promise((resolve) => { const t = setTimeout(() => resolve('slept'), ms); wakers.push(() => { clearTimeout(t); resolve('slept') }) }) },
      ],
      events: { 'orders.placed': { group: 'billing', handler: () => {} } },
    })
    const client = h.client({ seeds: [peer.endpoint] })
    await client.waitFor('orders.get')
    return { ran, peer, client, wake: () => { for (const w of wakers.splice(0)) w() } }
  }

  it('serves a contract\'s methods at POST /{contract}/{method}, GET / mapped to a method without a contract, the peers\' other methods, and 404 for the rest', async () => {
    const { ran, client } = await ordersMesh()
    const base = await listen(gateway(client, { contracts: [orders], routes: { 'GET /': 'countdown' } }))
    let r = await post(`${base}/orders/get`, { id: 'A-1', qty: '2' })
    expect(r.status).to.equal(200)
    expect(r.headers.get('content-type')).to.match(/^application\/json/)
    expect(await r.json()).to.deep.equal({ id: 'A-1', qty: 2 })
    r = await fetch(`${base}/`)
    expect([r.status, await r.json()]).to.deep.equal([200, 'done'])
    expect(ran.countdown).to.equal(1)
    r = await post(`${base}/whoami`, '') // a method the peer serves without a contract, at its default route; an empty body: no args
    expect([r.status, await r.json()]).to.deep.equal([200, 'me'])
    r = await post(`${base}/countdown`, '') // mapped to GET /: not at its default route
    expect(r.status).to.equal(404)
    expect(await r.json()).to.deep.equal({ error: 'no route POST /countdown', code: null })
  })

  it('checks the input by the contract before the call (nothing is sent), and answers 400 with its issues; bad JSON 400, a body over maxBody 413', async () => {
    // The peer's handler does not check: only the gateway's check stands between.
    const peer = await h.peer({ handlers: { 'orders.get': (args) => { calls.push(args); return { id: 'x', qty: 1 } } } })
    const calls = []
    const client = h.client({ seeds: [peer.endpoint] })
    await client.waitFor('orders.get')
    const base = await listen(gateway(client, { contracts: [orders], maxBody: 64 }))
    let r = await post(`${base}/orders/get`, { id: '' })
    expect(r.status).to.equal(400)
    const body = await r.json()
    expect(body.code).to.equal('ERR_ZEROMESH_INVALID_INPUT')
    expect(body.issues).to.deep.equal([{ path: ['id'], message: 'Too small: expected string to have >=1 characters' }])
    r = await post(`${base}/orders/get`, '{"id": ')
    expect([r.status, (await r.json()).error]).to.deep.equal([400, 'the body is not JSON'])
    r = await post(`${base}/orders/get`, { id: 'x'.repeat(100) })
    expect(r.status).to.equal(413)
    expect(calls).to.deep.equal([])
    r = await post(`${base}/orders/get`, { id: 'ok', qty: '3' })
    expect(r.status).to.equal(200)
    expect(calls).to.deep.equal([{ id: 'ok', qty: '3' }]) // sent as given, as client.proxy sends it: the peer's own check coerces
  })

  it('the deadline comes from x-zeromesh-timeout (at most maxTimeout): 504 past it; no peer in time is 503 with Retry-After; a bad header 400', async () => {
    const { client } = await ordersMesh()
    const base = await listen(gateway(client, { routes: { 'POST /sleep': 'sleep' }, maxTimeout: 10000 }))
    let r = await post(`${base}/sleep`, { ms: 2000 }, { 'x-zeromesh-timeout': '150' })
    expect(r.status).to.equal(504)
    expect((await r.json()).code).to.equal('ERR_ZEROMESH_TIMEOUT')
    r = await post(`${base}/sleep`, { ms: 10 }, { 'x-zeromesh-timeout': '5000' })
    expect([r.status, await r.json()]).to.deep.equal([200, 'slept'])
    r = await post(`${base}/sleep`, { ms: 10 }, { 'x-zeromesh-timeout': 'soon' })
    expect(r.status).to.equal(400)
    // A client whose only peer is gone: nothing can run it, 503 with Retry-After.
    const gone = await h.peer({ handlers: { echo: (x) => x } })
    const lonely = h.client({ seeds: [gone.endpoint] })
    await lonely.waitFor('echo')
    await gone.stop()
    await eventually(() => expect(lonely.peers().every((p) => p.state !== 'up')).to.equal(true))
    const base2 = await listen(gateway(lonely, { routes: { 'POST /echo': 'echo' }, timeout: 300 }))
    r = await post(`${base2}/echo`, { a: 1 })
    expect(r.status).to.equal(503)
    expect(r.headers.get('retry-after')).to.equal('1')
    expect((await r.json()).code).to.equal('ERR_ZEROMESH_NO_PEERS')
    // problem+json when asked: the same answer as RFC 9457 problem details.
    const base3 = await listen(gateway(lonely, { routes: { 'POST /echo': 'echo' }, timeout: 300, problemJson: true }))
    r = await post(`${base3}/echo`, { a: 1 })
    expect(r.headers.get('content-type')).to.equal('application/problem+json')
    expect(await r.json()).to.deep.include({ type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'ERR_ZEROMESH_NO_PEERS' })
  })

  it('a closed client answers 503 ERR_ZEROMESH_CLOSED with Retry-After, for a request and a stream', async () => {
    const { client } = await ordersMesh()
    const base = await listen(gateway(client, { contracts: [orders] }))
    expect((await post(`${base}/whoami`, '')).status).to.equal(200)
    await client.close()
    for (const [path, body] of [['/whoami', ''], ['/orders/list', { n: 2 }]]) {
      const r = await post(`${base}${path}`, body)
      expect([r.status, r.headers.get('retry-after'), (await r.json()).code], path).to.deep.equal([503, '1', 'ERR_ZEROMESH_CLOSED'])
    }
  })

  it('a stream method answers server-sent events, one data: line of JSON per item', async () => {
    const { client } = await ordersMesh()
    const base = await listen(gateway(client, { contracts: [orders] }))
    const r = await post(`${base}/orders/list`, { n: 3 })
    expect(r.status).to.equal(200)
    expect(r.headers.get('content-type')).to.equal('text/event-stream')
    expect(await r.text()).to.equal('data: {"i":0}\n\ndata: {"i":1}\n\ndata: {"i":2}\n\n')
    const bad = await post(`${base}/orders/list`, { n: 1000 }) // refused before the first item: an ordinary 400
    expect(bad.status).to.equal(400)
    // A caller that hangs up ends the stream (100 ticks of 50 ms would take 5 s).
    const hangUp = new AbortController()
    const ticking = await fetch(`${base}/ticks`, { method: 'POST', body: '{"n": 100}', headers: { 'content-type': 'application/json' }, signal: hangUp.signal })
    const reader = ticking.body.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).to.equal('data: 0\n\n')
    expect(client.stats().inflight).to.equal(1)
    hangUp.abort()
    await eventually(() => expect(client.stats().inflight).to.equal(0), { timeout: 1000 })
  })

  it('serves /openapi.json and /asyncapi.json of its routes, which the outside validators accept, and learns a method a peer starts serving later', async () => {
    const { peer, client } = await ordersMesh()
    const gw = gateway(client, { contracts: [orders], routes: { 'GET /': 'countdown' } })
    const base = await listen(gw)
    const api = await (await fetch(`${base}/openapi.json`)).json()
    expect(await openapiErrors(api)).to.deep.equal([])
    expect(Object.keys(api.paths).sort()).to.deep.equal(['/', '/orders/get', '/orders/list', '/sleep', '/ticks', '/whoami'])
    expect(api.info.version).to.equal('1.2.0')
    const events = await (await fetch(`${base}/asyncapi.json`)).json()
    expect(await asyncapiErrors(events)).to.deep.equal([])
    expect(Object.values(events.operations).map((o) => o['x-zeromesh-group']).filter(Boolean)).to.deep.equal(['billing'])
    // A method served from now on: the gateway routes it once the client has heard of it.
    peer.serve('later', () => 'here')
    await eventually(async () => {
      const r = await post(`${base}/later`, '')
      expect([r.status, await r.json()]).to.deep.equal([200, 'here'])
    }, { timeout: 10000 })
    expect(Object.keys(gw.openapi().paths)).to.include('/later')
  })

  it('mounts on Express: a body express.json() read, under a mount path, and next() for a route it does not serve', async () => {
    const { client } = await ordersMesh()
    const app = express()
    app.use(express.json())
    app.use('/api', gateway(client, { contracts: [orders] }))
    app.get('/api/mine', (req, res) => res.json({ mine: true })) // the app's own route beside the gateway's
    app.use((req, res) => res.status(404).json({ express: 'not found' }))
    const base = await listen(app)
    let r = await post(`${base}/api/orders/get`, { id: 'E-1' })
    expect([r.status, await r.json()]).to.deep.equal([200, { id: 'E-1', qty: 1 }])
    r = await fetch(`${base}/api/mine`)
    expect(await r.json()).to.deep.equal({ mine: true })
    r = await fetch(`${base}/api/nothing`)
    expect([r.status, await r.json()]).to.deep.equal([404, { express: 'not found' }])
    r = await fetch(`${base}/api/openapi.json`)
    expect(Object.keys((await r.json()).paths)).to.include('/orders/get')
  })

  it('mounts on Fastify (the raw request and response, the body Fastify parsed) and on a NestJS app\'s Express adapter (app.use)', async () => {
    const { client } = await ordersMesh()
    const { default: Fastify } = await import('fastify')
    const fastify = Fastify()
    const api = gateway(client, { contracts: [orders] })
    fastify.get('/mine', async () => ({ mine: true })) // the app's own route beside the gateway's
    fastify.all('/*', (request, reply) => { reply.hijack(); request.raw.body = request.body; api(request.raw, reply.raw) })
    await fastify.listen({ port: 0, host: '127.0.0.1' })
    try {
      const base = `http://127.0.0.1:${fastify.server.address().port}`
      let r = await post(`${base}/orders/get`, { id: 'F-1', qty: 2 })
      expect([r.status, await r.json()]).to.deep.equal([200, { id: 'F-1', qty: 2 }])
      r = await post(`${base}/orders/get`, { id: '' })
      expect([r.status, (await r.json()).code]).to.deep.equal([400, 'ERR_ZEROMESH_INVALID_INPUT'])
      expect(await (await fetch(`${base}/mine`)).json()).to.deep.equal({ mine: true })
      expect(Object.keys((await (await fetch(`${base}/openapi.json`)).json()).paths)).to.include('/orders/get')
      expect((await fetch(`${base}/nothing`)).status).to.equal(404)
    } finally {
      await fastify.close()
    }
    await import('reflect-metadata')
    const { NestFactory } = await import('@nestjs/core')
    const { Module } = await import('@nestjs/common')
    class AppModule {}
    Module({})(AppModule)
    const app = await NestFactory.create(AppModule, { logger: false })
    app.use(api)
    await app.listen(0, '127.0.0.1')
    try {
      const base = await app.getUrl()
      const r = await post(`${base}/orders/get`, { id: 'N-1' })
      expect([r.status, await r.json()]).to.deep.equal([200, { id: 'N-1', qty: 1 }])
      expect((await fetch(`${base}/openapi.json`)).status).to.equal(200)
    } finally {
      await app.close()
    }
  })

  it('openapiOf(client) and asyncapiOf(client) describe what the client\'s peers state, which the outside validators accept', async () => {
    const { client } = await ordersMesh()
    const { openapiOf, asyncapiOf } = await import('../../http/index.js')
    const api = openapiOf(client, { onWarning: () => {} })
    expect(await openapiErrors(api)).to.deep.equal([])
    expect(Object.keys(api.paths).sort()).to.deep.equal(['/countdown', '/orders/get', '/orders/list', '/sleep', '/ticks', '/whoami'])
    expect(api.components.schemas['orders.get.input'].properties.id).to.deep.equal({ type: 'string', minLength: 1 }) // the JSON Schema the peer stated
    const events = asyncapiOf(client)
    expect(await asyncapiErrors(events)).to.deep.equal([])
    expect(events.components.schemas['orders.placed'].properties.id).to.deep.equal({ type: 'string' })
  })

  it('with abortOnClose, a caller that hangs up aborts its call: the client holds it no longer', async () => {
    const { client, wake } = await ordersMesh()
    const base = await listen(gateway(client, { routes: { 'POST /sleep': 'sleep' }, abortOnClose: true }))
    const r = post(`${base}/sleep`, { ms: 9000 }, { 'x-zeromesh-timeout': '10000' }) // still running when the other is aborted, until woken
    await eventually(() => expect(client.stats().inflight).to.equal(1))
    const hangUp = new AbortController()
    const call = fetch(`${base}/sleep`, { method: 'POST', body: JSON.stringify({ ms: 8000 }), headers: { 'content-type': 'application/json', 'x-zeromesh-timeout': '10000' }, signal: hangUp.signal }).catch((err) => err.name)
    await eventually(() => expect(client.stats().inflight).to.equal(2))
    hangUp.abort()
    expect(await call).to.equal('AbortError')
    await eventually(() => expect(client.stats().inflight).to.equal(1), { timeout: 1000 }) // the aborted one gone, long before either sleep ends; the other runs on
    wake()
    expect(await (await r).json()).to.equal('slept')
  })

  it('refuses wrong options, naming what to write', async () => {
    const peer = await h.peer({ handlers: { echo: (x) => x } })
    const client = h.client({ seeds: [peer.endpoint] })
    expect(() => gateway({})).to.throw(/client must be a zeromesh Client/)
    expect(() => gateway(client, { routes: { 'GET /': 42 } })).to.throw(/must name a method/)
    expect(() => gateway(client, { timeout: -1 })).to.throw(/timeout must be a positive whole number/)
    expect(() => gateway(client, { openapiPath: 'openapi.json' })).to.throw(/openapiPath must be a path/)
    expect(() => gateway(client, { contracts: [{}] })).to.throw(/contracts must be an array of contracts/)
    expect(() => gateway(client, { colour: 'red' })).to.throw(/unknown option "colour"/)
  })
})
