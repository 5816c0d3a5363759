// One mesh, many services, over real ZeroMQ sockets: peers say what they serve (methods,
// version, labels), clients route each method to the peers that serve it, learn changes at run
// time, and fail at once, with what is served, for a method nobody serves.
import { expect } from 'chai'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { Peer } from '../../index.js'

const who = (name) => ({ [name]: (args, ctx) => ctx.endpoint })

describe('services: routing by method over ZeroMQ', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  // The probe: A serves alpha and shared, B beta and shared, C all three; a client
  // seeded with A alone. Before services, 96 of 300 alpha and 118 of 300 beta requests failed
  // with UNKNOWN_METHOD though some peer served each of them.
  it('a method goes only to peers that serve it: 0 of 600 fail, and each reaches only its servers', async () => {
    const fast = { membership: { probeInterval: 50, pushPullInterval: 200 } }
    const a = await h.peer({ ...fast, handlers: { ...who('alpha'), ...who('shared') } })
    const b = await h.peer({ ...fast, seeds: [a.endpoint], handlers: { ...who('beta'), ...who('shared') } })
    const c = await h.peer({ ...fast, seeds: [a.endpoint], handlers: { ...who('alpha'), ...who('beta'), ...who('shared') } })
    await eventually(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(3))
    const client = h.client({ seeds: [a.endpoint], refreshInterval: 200 })
    await eventually(() => expect(client.peers().filter((p) => p.service !== null)).to.have.length(3))
    const seen = { alpha: new Map(), beta: new Map() }
    let failed = 0
    await Promise.all(Array.from({ length: 300 }, async (_, i) => {
      for (const m of ['alpha', 'beta']) {
        try {
          const ep = await client.request(m, i, { idempotent: false })
          seen[m].set(ep, (seen[m].get(ep) ?? 0) + 1)
        } catch { failed++ }
      }
    }))
    expect(failed).to.equal(0)
    expect([...seen.alpha.keys()].sort()).to.deep.equal([a.endpoint, c.endpoint].sort())
    expect([...seen.beta.keys()].sort()).to.deep.equal([b.endpoint, c.endpoint].sort())
    const row = client.peers().find((p) => p.endpoint === b.endpoint)
    expect(row.service).to.deep.equal({ methods: ['beta', 'shared'], version: null, labels: {}, capacity: null, contracts: [], events: [], streams: [] })
  })

  it('a method nobody serves fails at once with UNKNOWN_METHOD naming it and what is served', async () => {
    const a = await h.peer({ handlers: { ...who('alpha'), ...who('shared') } })
    const client = h.client({ seeds: [a.endpoint] })
    await client.waitFor('alpha')
    const t0 = Date.now()
    const err = await rejectsWith(client.request('gamma', null, { timeout: 5000 }), 'ERR_ZEROMESH_UNKNOWN_METHOD')
    expect(Date.now() - t0).to.be.below(1000)
    expect(err.message).to.equal('zeromesh: no peer serves "gamma"; the peers known serve alpha, shared')
    expect(a.stats().requests ?? 0).to.equal(0) // never sent
  })

  it('serve() and unserve() at run time: clients learn within a refresh, and no request fails on the way', async () => {
    const fast = { membership: { probeInterval: 50, pushPullInterval: 200 } }
    const a = await h.peer({ ...fast, handlers: who('alpha') })
    const b = await h.peer({ ...fast, seeds: [a.endpoint], handlers: who('alpha') })
    await eventually(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(2))
    const client = h.client({ seeds: [a.endpoint], refreshInterval: 200 })
    await client.waitFor('alpha')
    const inc = b.members().find((m) => m.endpoint === b.endpoint).incarnation
    b.serve('gamma', () => 'gamma from b')
    expect(b.members().find((m) => m.endpoint === b.endpoint).incarnation).to.be.above(inc)
    expect(b.service().methods).to.deep.equal(['alpha', 'gamma'])
    expect(await client.waitFor('gamma', { timeout: 3000 })).to.deep.equal([b.endpoint])
    expect(await client.request('gamma')).to.equal('gamma from b')
    // B stops serving alpha while requests for it keep coming: each goes to A, or is retried there.
    let failed = 0
    let done = 0
    const load = Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 60; i++) {
        try { await client.request('alpha', i, { idempotent: false }); done++ } catch { failed++ }
      }
    }))
    await eventually(() => expect(done).to.be.above(8)) // the load is under way
    expect(b.unserve('alpha')).to.equal(true)
    expect(b.unserve('alpha')).to.equal(false)
    await load
    expect(failed).to.equal(0)
    await eventually(() => expect(client.peers().find((p) => p.endpoint === b.endpoint).service.methods).to.deep.equal(['gamma']))
    for (let i = 0; i < 20; i++) expect(await client.request('alpha')).to.equal(a.endpoint)
  })

  it('version ranges and label selectors pick among the servers; waitFor() waits for one', async () => {
    const v1 = await h.peer({ handlers: who('api'), serviceVersion: '1.4.0', labels: { zone: 'a' } })
    const v2 = await h.peer({ seeds: [v1.endpoint], handlers: who('api'), serviceVersion: '2.1.0', labels: { zone: 'b', tier: 'gold' } })
    const client = h.client({ seeds: [v1.endpoint, v2.endpoint] })
    expect((await client.waitFor('api', { version: '^2' }))).to.deep.equal([v2.endpoint])
    for (let i = 0; i < 10; i++) {
      expect(await client.request('api', null, { version: '^2' })).to.equal(v2.endpoint)
      expect(await client.request('api', null, { version: '~1.4' })).to.equal(v1.endpoint)
      expect(await client.request('api', null, { where: { tier: 'gold' } })).to.equal(v2.endpoint)
      expect(await client.request('api', null, { where: { zone: 'a' } })).to.equal(v1.endpoint)
    }
    const err = await rejectsWith(client.request('api', null, { version: '>=3' }), 'ERR_ZEROMESH_UNKNOWN_METHOD')
    expect(err.message).to.match(/no peer serving "api" matches version >=3 \(versions served: (1\.4\.0, 2\.1\.0|2\.1\.0, 1\.4\.0)\)/)
    await rejectsWith(client.waitFor('api', { version: '^3', timeout: 200 }), 'ERR_ZEROMESH_TIMEOUT')
    await rejectsWith(client.request('api', null, { version: 'two' }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    await rejectsWith(client.request('api', null, { where: { zone: 1 } }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    const gold = h.client({ seeds: [v1.endpoint], where: { tier: 'gold' } })
    for (let i = 0; i < 5; i++) expect(await gold.request('api')).to.equal(v2.endpoint)
  })

  it('a peer refuses labels and versions outside the limits, with what to use instead', () => {
    expect(() => new Peer({ labels: { zone: 'a,b' } })).to.throw(/labels: label zone must be a string of at most 63 characters without commas/)
    expect(() => new Peer({ serviceVersion: 'two' })).to.throw(/serviceVersion: version must be a semantic version such as 2.1.0/)
    expect(() => new Peer({ labels: { 'bad key': 'x' } })).to.throw(/label key "bad key"/)
  })
})

describe('services: which methods stream (PROTOCOL.md 4.8.2)', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  it('a peer states its async generator methods as streams; client.streaming() tells a caller that knows only the name, and follows serve()', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x, async * count ({ n }) { for (let i = 0; i < n; i++) yield i } } })
    expect(p.service().streams).to.deep.equal(['count'])
    expect(p.service().labels).to.have.property('zeromesh/streams')
    const c = h.client({ seeds: [p.endpoint] })
    expect(c.streaming('count')).to.equal(null) // nothing said yet
    await c.waitFor('count')
    expect(c.streaming('count')).to.equal(true)
    expect(c.streaming('echo')).to.equal(false)
    expect(c.streaming('nope')).to.equal(null)
    expect((await c.describe(p.endpoint)).streams).to.deep.equal(['count'])
    // echo becomes a stream: the digest changes, the client asks again.
    p.serve('echo', async function * (x) { yield x })
    await eventually(() => expect(c.streaming('echo')).to.equal(true))
    const items = []
    for await (const x of c.stream('echo', 7)) items.push(x)
    expect(items).to.deep.equal([7])
  })

  it('a worker thread reports its stream methods, a contract\'s stream method among them', async () => {
    const p = await h.peer({ handlers: [new URL('../fixtures/orders-handlers.js', import.meta.url)], threads: 1 })
    const served = p.service()
    expect(served.streams).to.include('orders.list')
    expect(served.streams.every((m) => served.methods.includes(m))).to.equal(true)
    expect(served.streams).to.not.include('orders.get')
  })
})
