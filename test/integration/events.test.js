// Events over ZeroMQ (issue 58, docs/guides/events.md): subscriptions made the three ways,
// publish to one peer of each group, broadcast to every subscriber, acks, handler errors, no
// subscriber, groups, contracts, middleware and headers, and a redelivery run once.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { z } from 'zod'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { contract, implement, on, InvalidInputError, NoSubscribersError } from '../../index.js'
import { decode, describeService, encodeService, MessageType, Feature } from '../../protocol/index.js'
import { encodeEvent } from '../../protocol/event-codec.js'
import { newKeyPair } from '../../transport/keys.js'

describe('events', function () {
  this.timeout(20000)
  const h = harness()
  afterEach(() => h.cleanup())

  /** A client that knows every peer of `peers` and what each subscribes to. */
  async function clientOf (peers, options = {}) {
    const c = h.client({ seeds: peers.map((p) => p.endpoint), ...options })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(peers.length))
    return c
  }

  it('publish: one peer of each subscribing group handles each event once, when nothing fails (200 events, 2 groups of 2 peers)', async () => {
    const runs = { billing: [], shipping: [] }
    const peerOf = (group) => h.peer({ events: { 'orders.placed': { group, handler: (o) => { runs[group].push(o.n) } } } })
    const peers = [await peerOf('billing'), await peerOf('billing'), await peerOf('shipping'), await peerOf('shipping')]
    const c = await clientOf(peers)
    const out = await Promise.all(Array.from({ length: 200 }, (_, n) => c.publish('orders.placed', { n })))
    for (const o of out) expect(o.delivered.map((d) => d.group)).to.deep.equal(['billing', 'shipping'])
    for (const group of ['billing', 'shipping']) {
      expect(runs[group].length, group).to.equal(200)
      expect(new Set(runs[group]).size, `${group}: each once`).to.equal(200)
    }
    // Balanced within a group: both peers of each took some.
    const byPeer = new Map()
    for (const o of out) for (const d of o.delivered) byPeer.set(d.endpoint, (byPeer.get(d.endpoint) ?? 0) + 1)
    expect(byPeer.size).to.equal(4)
    for (const [ep, n] of byPeer) expect(n, ep).to.be.above(20)
    expect(c.stats().events).to.include({ deliveries: 400, ok: 400, failed: 0 })
  })

  it('a handler\'s throw rejects the publish with its code, and says which groups got it; ack: false resolves once sent', async () => {
    const a = await h.peer({ events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
    const b = await h.peer({ events: { 'orders.placed': { group: 'shipping', handler: (o) => { if (o.bad) throw Object.assign(new Error('out of stock'), { code: 'E_STOCK' }) } } } })
    const c = await clientOf([a, b])
    const err = await rejectsWith(c.publish('orders.placed', { bad: true }), 'ERR_ZEROMESH_REMOTE')
    expect(err).to.include({ remoteCode: 'E_STOCK' })
    expect(err.delivered).to.deep.equal([{ group: 'billing', endpoint: a.endpoint }])
    expect(err.failed.map((f) => [f.group, f.endpoint, f.error.remoteCode])).to.deep.equal([['shipping', b.endpoint, 'E_STOCK']])
    expect(await c.publish('orders.placed', { bad: true }, { ack: false })).to.deep.equal({ sent: [{ group: 'billing', endpoint: a.endpoint }, { group: 'shipping', endpoint: b.endpoint }] })
    await eventually(() => expect(b.stats().events.byEvent['orders.placed']).to.include({ received: 2, failed: 2 }))
  })

  it('no subscriber: the publish waits within its deadline and fails ERR_ZEROMESH_NO_SUBSCRIBERS; one that comes in time gets it', async () => {
    const a = await h.peer({ handlers: { echo: (x) => x } })
    const c = await clientOf([a])
    const t0 = Date.now()
    const err = await rejectsWith(c.publish('audit.logged', 1, { timeout: 300 }), 'ERR_ZEROMESH_NO_SUBSCRIBERS')
    expect(err).to.be.instanceOf(NoSubscribersError)
    expect(err.retryable).to.equal(true)
    expect(Date.now() - t0).to.be.within(250, 1500)
    let got = null
    const later = c.publish('audit.logged', 2, { timeout: 5000 })
    a.subscribe('audit.logged', (x) => { got = x }) // at run time: the client learns it within a refresh
    expect(await later).to.deep.equal({ delivered: [{ group: 'audit.logged', endpoint: a.endpoint }] })
    expect(got).to.equal(2)
    expect(a.unsubscribe('audit.logged')).to.equal(true)
    expect(a.unsubscribe('audit.logged')).to.equal(false)
  })

  it('groups names the groups that must each get it: one with no peer up waits and fails NO_SUBSCRIBERS; the others are delivered', async () => {
    const a = await h.peer({ events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
    const c = await clientOf([a])
    const err = await rejectsWith(c.publish('orders.placed', 1, { groups: ['billing', 'shipping'], timeout: 300 }), 'ERR_ZEROMESH_NO_SUBSCRIBERS')
    expect(err.delivered).to.deep.equal([{ group: 'billing', endpoint: a.endpoint }])
    expect(err.failed.map((f) => f.group)).to.deep.equal(['shipping'])
  })

  it('a fresh client, seeded with one peer, learns the cluster before it decides who gets an event: every group, every subscriber', async () => {
    const a = await h.peer({ events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
    const b = await h.peer({ seeds: [a.endpoint], events: { 'orders.placed': { group: 'shipping', handler: () => {} } } })
    await eventually(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(2))
    const fresh = () => h.client({ seeds: [a.endpoint] }) // knows a alone, until its first member list
    const out = await fresh().publish('orders.placed', { n: 1 })
    expect(out.delivered.map((d) => d.group)).to.deep.equal(['billing', 'shipping'])
    const all = await fresh().broadcast('orders.placed', { n: 2 })
    expect(all.delivered.map((d) => d.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
  })

  it('broadcast reaches every subscribing peer in every group, those outside the client\'s subset too, and reports each', async () => {
    const seen = []
    const sub = (who, group) => ({ 'cache.drop': { group, handler: (k) => { seen.push([who, k]) } } })
    const a = await h.peer({ events: sub('a', 'api') })
    const b = await h.peer({ seeds: [a.endpoint], events: sub('b', 'api') })
    const d = await h.peer({ seeds: [a.endpoint], events: sub('d', 'worker') })
    await h.peer({ seeds: [a.endpoint], handlers: { echo: (x) => x } }) // subscribes to nothing
    await eventually(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(4))
    const c = h.client({ seeds: [a.endpoint], subset: 1 })
    await eventually(() => expect(c.stats().memberLists).to.be.at.least(1)) // it knows the members...
    await eventually(() => expect(c.peers().length).to.be.at.most(2)) // ...and is connected to its subset (and its seed): not to every subscriber
    const out = await c.broadcast('cache.drop', 'user:42')
    expect(out.delivered.map((x) => x.endpoint).sort()).to.deep.equal([a, b, d].map((p) => p.endpoint).sort())
    expect(out).to.include.keys('failed', 'unreached')
    expect(out.failed).to.deep.equal([])
    expect(seen.map(([who]) => who).sort()).to.deep.equal(['a', 'b', 'd'])
    await rejectsWith(c.broadcast('nobody.listens', 1, { timeout: 300 }), 'ERR_ZEROMESH_NO_SUBSCRIBERS')
  })

  it('the middleware and headers apply to events: the client\'s sees kind publish or broadcast, a peer\'s sees kind "event" and the group, the handler the headers', async () => {
    const log = []
    const a = await h.peer({ events: { 'cache.drop': (k, ctx) => { log.push(['handler', ctx.method, ctx.group, ctx.headers.tenant]) } } })
    a.use(async (ctx, next) => { log.push(['mw', ctx.kind, ctx.method, ctx.group]); return next() })
    const c = await clientOf([a])
    c.use(async (ctx, next) => { log.push(['client', ctx.kind, ctx.method, ctx.args]); ctx.headers.tenant = 'acme'; return next() })
    await c.publish('cache.drop', 'k')
    expect(log).to.deep.equal([['client', 'publish', 'cache.drop', 'k'], ['mw', 'event', 'cache.drop', 'cache.drop'], ['handler', 'cache.drop', 'cache.drop', 'acme']])
    log.length = 0
    const out = await c.broadcast('cache.drop', 'j')
    expect(out.delivered).to.have.length(1)
    expect(log).to.deep.equal([['client', 'broadcast', 'cache.drop', 'j'], ['mw', 'event', 'cache.drop', null], ['handler', 'cache.drop', null, 'acme']])
  })

  it('contracts: an event the contract publishes is checked and typed in client.proxy(); a subscription made through implement() belongs to the implementing contract\'s group', async () => {
    const orders = contract('orders', { methods: { get: { input: z.object({ id: z.string() }), output: z.any() } }, events: { placed: z.object({ id: z.string(), total: z.number() }) } })
    const billing = contract('billing', { methods: { charge: { input: z.object({ cents: z.number() }), output: z.any() } } })
    const charged = []
    const peer = await h.peer({
      handlers: [
        implement(orders, { get: ({ id }) => ({ id }) }),
        implement(billing, { charge: () => ({ ok: true }) }, { events: [on(orders, 'placed', (order) => { charged.push(order) })] }),
      ],
    })
    expect(peer.service().events).to.deep.equal([{ event: 'orders.placed', group: 'billing' }])
    const c = await clientOf([peer])
    const o = c.proxy(orders)
    expect(await o.events.placed.publish({ id: 'a', total: 5 })).to.deep.equal({ delivered: [{ group: 'billing', endpoint: peer.endpoint }] })
    expect(charged).to.deep.equal([{ id: 'a', total: 5 }])
    const bad = await rejectsWith(o.events.placed.publish({ id: 'b' }), 'ERR_ZEROMESH_INVALID_INPUT')
    expect(bad).to.be.instanceOf(InvalidInputError)
    // The same payload, unchecked by the caller: the subscriber refuses it, as a method refuses a bad input.
    const late = await rejectsWith(c.publish('orders.placed', { id: 'b' }), 'ERR_ZEROMESH_INVALID_INPUT')
    expect(late.issues).to.deep.equal(bad.issues)
    expect(charged).to.have.length(1)
    // What the peer states: the contract's events with their JSON Schemas.
    const d = await c.describe(peer.endpoint)
    expect(d.contracts.find((x) => x.name === 'orders').events.map((e) => e.name)).to.deep.equal(['orders.placed'])
  })

  it('a handler module\'s events export runs in worker threads, with the group it names', async () => {
    const mod = 'data:text/javascript,' + encodeURIComponent(`
      import { threadId } from 'node:worker_threads'
      export function echo (x) { return x }
      export const events = { 'cache.drop': (k, ctx) => { globalThis.drops = (globalThis.drops ?? 0) + 1; if (k === 'boom') throw Object.assign(new Error('thread broke'), { code: 'E_T' }) }, 'orders.placed': { group: 'billing', handler: () => {} } }
      export function drops () { return globalThis.drops ?? 0 }
      export function thread () { return threadId }`)
    const p = await h.peer({ handlers: mod, threads: 1 })
    expect(p.service().events).to.deep.equal([{ event: 'cache.drop', group: 'cache.drop' }, { event: 'orders.placed', group: 'billing' }])
    const c = await clientOf([p])
    await c.publish('cache.drop', 'k')
    expect(await c.request('drops')).to.equal(1)
    expect((await rejectsWith(c.publish('cache.drop', 'boom'), 'ERR_ZEROMESH_REMOTE')).remoteCode).to.equal('E_T')
    expect((await c.broadcast('cache.drop', 'k2')).delivered).to.deep.equal([{ endpoint: p.endpoint }])
    expect(await c.request('drops')).to.equal(3)
  })

  it('a redelivered event (the same id on the same connection) runs once and gets the same ack; one with no ack is not remembered', async () => {
    let runs = 0
    const p = await h.peer({ events: { 'cache.drop': () => { runs++ } } })
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 1000 })
    h.track(s)
    s.connect(p.endpoint)
    const ack = async () => decode((await s.receive())[0]).replies
    await s.send(encodeEvent([[7, 'cache.drop', 'k', 1000, 'cache.drop', true]]))
    expect(await ack()).to.deep.equal([{ id: 7, status: 0, value: null }])
    await s.send(encodeEvent([[7, 'cache.drop', 'k', 1000, 'cache.drop', true]]))
    expect(await ack()).to.deep.equal([{ id: 7, status: 0, value: null }])
    expect(runs).to.equal(1)
    expect(p.stats().events.duplicates).to.equal(1)
    await s.send(encodeEvent([[8, 'cache.drop', 'k', 1000, null, false], [8, 'cache.drop', 'k', 1000, null, false], [9, 'cache.drop', 'k', 1000, 'nope', true]]))
    expect(await ack()).to.deep.equal([{ id: 9, status: 1, message: 'no subscription to "cache.drop" in group "nope"; this peer subscribes to cache.drop', code: null }])
    expect(runs).to.equal(3) // the two with no ack each ran
  })

  it('a peer publishes through ctx (a handler on the main thread, and in a worker thread) and through peer.publish, in a secured cluster too', async () => {
    const cluster = newKeyPair()
    const alice = newKeyPair()
    const security = { clusterKey: cluster.secretKey, allow: [alice.publicKey] }
    const seen = []
    const billing = await h.peer({ security, events: { 'orders.placed': { group: 'billing', handler: (o) => { seen.push(o.id) } } } })
    const mod = 'data:text/javascript,' + encodeURIComponent('export async function place (o, ctx) { const r = await ctx.publish(\'orders.placed\', o); return r.delivered.map((d) => d.group) }')
    const inThread = await h.peer({ security, seeds: [billing.endpoint], handlers: mod, threads: 1 })
    const onMain = await h.peer({ security, seeds: [billing.endpoint], handlers: { place: async (o, ctx) => (await ctx.publish('orders.placed', o)).delivered.map((d) => d.group) } })
    const as = { clusterPublicKey: cluster.publicKey, secretKey: alice.secretKey }
    for (const [p, id] of [[inThread, 'thread'], [onMain, 'main']]) {
      const c = h.client({ seeds: [p.endpoint], security: as, discover: false })
      expect(await c.request('place', { id })).to.deep.equal(['billing'])
    }
    expect(await onMain.publish('orders.placed', { id: 'peer' })).to.deep.equal({ delivered: [{ group: 'billing', endpoint: billing.endpoint }] })
    expect(seen).to.deep.equal(['thread', 'main', 'peer'])
    expect(billing.stats().security.keys).to.include({ badProofs: 0 }) // the publishing peers' clients proved the cluster's key
  })

  it('a peer that does not say it takes events (no Feature.EVENTS) is never sent one, whatever it states; the error says so', async () => {
    // A hand-written peer whose SERVICE answer lists a subscription but only Feature.STREAMS.
    const odd = new zmq.Router({ linger: 0 })
    h.track(odd)
    await odd.bind('tcp://127.0.0.1:0')
    const d = describeService({ methods: ['echo'], version: null, labels: {}, capacity: null, events: [['cache.drop', 'cache.drop']] })
    let events = 0
    ;(async () => {
      for await (const [id, frame] of odd) {
        let msg
        try { msg = decode(frame) } catch { continue }
        if (msg.type === MessageType.EVENT) events++
        if (msg.type === MessageType.SERVICE_GET) await odd.send([id, encodeService(msg.seq, d, Feature.STREAMS)]).catch(() => {})
      }
    })().catch(() => {})
    const c = h.client({ seeds: [odd.lastEndpoint], discover: false })
    await eventually(() => expect(c.peers()[0].service?.events).to.deep.equal([{ event: 'cache.drop', group: 'cache.drop' }]))
    const err = await rejectsWith(c.publish('cache.drop', 'k', { timeout: 500 }), 'ERR_ZEROMESH_NO_PEERS')
    expect(err.message).to.match(/take no events/)
    const out = await c.broadcast('cache.drop', 'k', { timeout: 500 })
    expect(out.delivered).to.deep.equal([])
    expect(out.unreached.concat(out.failed).map((x) => x.endpoint)).to.deep.equal([odd.lastEndpoint])
    expect(events).to.equal(0)
  })
})
