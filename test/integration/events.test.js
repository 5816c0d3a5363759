// Events over ZeroMQ (issue 58, docs/guides/events.md), what the behaviour suite does not
// run in both worlds (test/behaviour/events.test.js: publish, acks, handler errors, no
// subscriber, groups, broadcast, middleware and headers): contracts, handler modules' events
// in worker threads, a redelivery on the same connection run once, a peer publishing in a
// secured cluster (CURVE), a peer that does not take events.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { z } from 'zod'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { contract, implement, on, InvalidInputError } from '../../index.js'
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
