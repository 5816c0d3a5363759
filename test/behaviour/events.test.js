// What an event does, in every world (test/helpers/worlds.js): a publish acked by one peer of
// each group, once, spread within a group; a handler's throw and ack: false; no subscriber
// waited for within the deadline; the groups a publish names; a fresh client that learns the
// cluster first; a broadcast reported peer by peer, beyond the client's subset; the middleware
// and headers; a handler that never finishes held to the deadline; and in the memory world (a
// virtual clock, hosts that die) a redelivery after a lost peer and a broadcast's unreached
// member. What only real sockets show (threads, CURVE, raw frames): integration/events.test.js.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'
import { NoSubscribersError } from '../../index.js'

for (const W of WORLDS) {
  describe(`events (${W.name})`, function () {
    this.timeout(20000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    /** A client of `peers` that knows what each subscribes to. */
    async function clientOf (peers, options = {}) {
      const c = w.client({ seeds: peers.map((p) => p.endpoint), ...options })
      await w.until(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(peers.length))
      return c
    }

    it('a publish is acked by one peer of each group, each event handled once per group, both peers of a group taking some (200 events, 2 groups of 2 peers)', async () => {
      const runs = { billing: [], shipping: [] }
      const peerOf = (group) => w.peer({ events: { 'orders.placed': { group, handler: (o) => { runs[group].push(o.n) } } } })
      const peers = [await peerOf('billing'), await peerOf('billing'), await peerOf('shipping'), await peerOf('shipping')]
      const c = await clientOf(peers)
      const out = await w.settle(Promise.all(Array.from({ length: 200 }, (_, n) => c.publish('orders.placed', { n }))))
      for (const o of out) expect(o.delivered.map((d) => d.group)).to.deep.equal(['billing', 'shipping'])
      for (const group of ['billing', 'shipping']) expect(runs[group].sort((x, y) => x - y), group).to.deep.equal(Array.from({ length: 200 }, (_, n) => n))
      const byPeer = new Map()
      for (const o of out) for (const d of o.delivered) byPeer.set(d.endpoint, (byPeer.get(d.endpoint) ?? 0) + 1)
      expect(byPeer.size).to.equal(4)
      for (const [ep, n] of byPeer) expect(n, ep).to.be.above(20)
      expect(c.stats().events).to.include({ deliveries: 400, ok: 400, failed: 0, redelivered: 0 })
    })

    it('a handler\'s throw rejects the publish with its code, and says which groups got it; ack: false resolves once sent', async () => {
      const a = await w.peer({ events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
      const b = await w.peer({ events: { 'orders.placed': { group: 'shipping', handler: (o) => { if (o.bad) throw Object.assign(new Error('out of stock'), { code: 'E_STOCK' }) } } } })
      const c = await clientOf([a, b])
      const err = await failure(w, c.publish('orders.placed', { bad: true }))
      expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'E_STOCK' })
      expect(err.delivered).to.deep.equal([{ group: 'billing', endpoint: a.endpoint }])
      expect(err.failed.map((f) => [f.group, f.endpoint, f.error.remoteCode])).to.deep.equal([['shipping', b.endpoint, 'E_STOCK']])
      expect(await w.settle(c.publish('orders.placed', { bad: true }, { ack: false }))).to.deep.equal({ sent: [{ group: 'billing', endpoint: a.endpoint }, { group: 'shipping', endpoint: b.endpoint }] })
      await w.until(() => expect(b.stats().events.byEvent['orders.placed']).to.include({ received: 2, failed: 2 }))
    })

    it('groups names the groups that must each get it: one with no peer up waits and fails NO_SUBSCRIBERS; the others are delivered', async () => {
      const a = await w.peer({ events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
      const c = await clientOf([a])
      const err = await failure(w, c.publish('orders.placed', 1, { groups: ['billing', 'shipping'], timeout: 300 }))
      expect(err.code).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
      expect(err.delivered).to.deep.equal([{ group: 'billing', endpoint: a.endpoint }])
      expect(err.failed.map((f) => f.group)).to.deep.equal(['shipping'])
    })

    it('a fresh client, seeded with one peer, learns the cluster before it decides who gets an event: every group, every subscriber', async () => {
      const a = await w.peer({ events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
      const b = await w.peer({ seeds: [a.endpoint], events: { 'orders.placed': { group: 'shipping', handler: () => {} } } })
      await w.until(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(2))
      const fresh = () => w.client({ seeds: [a.endpoint] }) // knows a alone, until its first member list
      const out = await w.settle(fresh().publish('orders.placed', { n: 1 }))
      expect(out.delivered.map((d) => d.group)).to.deep.equal(['billing', 'shipping'])
      const all = await w.settle(fresh().broadcast('orders.placed', { n: 2 }))
      expect(all.delivered.map((d) => d.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
    })

    it('broadcast reaches every subscribing peer in every group, those outside the client\'s subset too, and reports each', async () => {
      const seen = []
      const sub = (who, group) => ({ 'cache.drop': { group, handler: (k) => { seen.push([who, k]) } } })
      const a = await w.peer({ events: sub('a', 'api') })
      const b = await w.peer({ seeds: [a.endpoint], events: sub('b', 'api') })
      const d = await w.peer({ seeds: [a.endpoint], events: sub('d', 'worker') })
      await w.peer({ seeds: [a.endpoint], handlers: { echo: (x) => x } }) // subscribes to nothing
      await w.until(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(4))
      const c = w.client({ seeds: [a.endpoint], subset: 1 })
      await w.until(() => expect(c.stats().memberLists).to.be.at.least(1)) // it knows the members...
      await w.until(() => expect(c.peers().length).to.be.at.most(2)) // ...and is connected to its subset (and its seed): not to every subscriber
      const out = await w.settle(c.broadcast('cache.drop', 'user:42'))
      expect(out.delivered.map((x) => x.endpoint).sort()).to.deep.equal([a, b, d].map((p) => p.endpoint).sort())
      expect(out).to.include.keys('failed', 'unreached')
      expect(out.failed).to.deep.equal([])
      expect(seen.map(([who]) => who).sort()).to.deep.equal(['a', 'b', 'd'])
      expect((await failure(w, c.broadcast('nobody.listens', 1, { timeout: 300 }))).code).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
    })

    it('the middleware and headers apply to events: the client\'s sees kind publish or broadcast, a peer\'s sees kind "event" and the group, the handler the headers', async () => {
      const log = []
      const a = await w.peer({ events: { 'cache.drop': (k, ctx) => { log.push(['handler', ctx.method, ctx.group, ctx.headers.tenant]) } } })
      a.use(async (ctx, next) => { log.push(['mw', ctx.kind, ctx.method, ctx.group]); return next() })
      const c = await clientOf([a])
      c.use(async (ctx, next) => { log.push(['client', ctx.kind, ctx.method, ctx.args]); ctx.headers.tenant = 'acme'; return next() })
      await w.settle(c.publish('cache.drop', 'k'))
      expect(log).to.deep.equal([['client', 'publish', 'cache.drop', 'k'], ['mw', 'event', 'cache.drop', 'cache.drop'], ['handler', 'cache.drop', 'cache.drop', 'acme']])
      log.length = 0
      const out = await w.settle(c.broadcast('cache.drop', 'j'))
      expect(out.delivered).to.have.length(1)
      expect(log).to.deep.equal([['client', 'broadcast', 'cache.drop', 'j'], ['mw', 'event', 'cache.drop', null], ['handler', 'cache.drop', null, 'acme']])
    })

    it('no subscriber: the publish waits within its deadline, fails ERR_ZEROMESH_NO_SUBSCRIBERS (retryable), and one that subscribes in time gets it; unsubscribe says whether there was one', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x } })
      const c = await clientOf([a])
      const t0 = w.now()
      const err = await failure(w, c.publish('orders.placed', {}, { timeout: 300 }))
      expect(err.code).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
      expect(err).to.be.instanceOf(NoSubscribersError)
      expect(err.retryable).to.equal(true)
      expect(w.now() - t0).to.be.within(250, 1500)
      const got = []
      const waiting = c.publish('orders.placed', { n: 1 }, { timeout: 5000 })
      await w.pass(100) // the subject, not a condition: the subscriber comes a while into the publish's wait
      a.subscribe('orders.placed', (o) => { got.push(o.n) })
      expect((await w.settle(waiting)).delivered).to.deep.equal([{ group: 'orders.placed', endpoint: a.endpoint }])
      expect(got).to.deep.equal([1])
      expect(a.unsubscribe('orders.placed')).to.equal(true)
      expect(a.unsubscribe('orders.placed')).to.equal(false)
    })

    it('waiting for subscribers: an abort fails a publish and a broadcast at once with its reason; one that comes in time gets each once', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x } })
      const b = await w.peer({ seeds: [a.endpoint], handlers: { echo: (x) => x } })
      const c = await clientOf([a, b])
      for (const call of [(signal) => c.publish('later', 0, { timeout: 5000, signal }), (signal) => c.broadcast('later', 0, { timeout: 5000, signal })]) {
        const ac = new AbortController()
        const t0 = w.now()
        const waiting = call(ac.signal)
        await w.pass(50) // the subject: a while into the wait
        ac.abort(new Error('enough'))
        const err = await failure(w, waiting)
        expect(err.code).to.equal('ERR_ZEROMESH_ABORTED')
        expect(err.cause?.message).to.equal('enough')
        expect(w.now() - t0).to.be.below(1000)
      }
      const got = []
      const published = c.publish('later', 1, { timeout: 5000 })
      const broadcast = c.broadcast('later', 2, { timeout: 5000 })
      await w.pass(100) // the subject: the subscriber comes a while into the wait
      b.subscribe('later', (n, ctx) => { got.push([n, ctx.endpoint]) }, { group: 'two' })
      expect((await w.settle(published)).delivered).to.deep.equal([{ group: 'two', endpoint: b.endpoint }])
      expect((await w.settle(broadcast)).delivered).to.deep.equal([{ endpoint: b.endpoint }])
      expect(got).to.deep.equal([[1, b.endpoint], [2, b.endpoint]])
      expect(c.stats()).to.include({ inflight: 0 })
    })

    it('a broadcast reaches every subscriber and reports each one; a handler that never finishes is held to the deadline', async () => {
      const a = await w.peer({ events: { tick: () => {} } })
      const b = await w.peer({ events: { tick: { group: 'other', handler: () => { throw Object.assign(new Error('nope'), { code: 'E_NOPE' }) } } } })
      const c = await clientOf([a, b])
      const out = await w.settle(c.broadcast('tick', null))
      expect(out.delivered).to.deep.equal([{ endpoint: a.endpoint }])
      expect(out.failed.map((f) => [f.endpoint, f.error.remoteCode])).to.deep.equal([[b.endpoint, 'E_NOPE']])
      expect(out.unreached).to.deep.equal([])
      a.subscribe('stuck', () => new Promise(() => {}))
      await w.until(() => expect(c.peers().find((p) => p.endpoint === a.endpoint).service.events.map((e) => e.event)).to.include('stuck'))
      expect((await failure(w, c.publish('stuck', null, { timeout: 300 }))).code).to.equal('ERR_ZEROMESH_TIMEOUT')
    })

    it('a subscription made later reaches a client that sends nothing, by its heartbeats (a PONG carries mv, PROTOCOL.md 4.6), with no periodic refresh', async () => {
      const a = await w.peer({ events: { tick: () => {} } })
      const c = await clientOf([a], { refreshInterval: 0 })
      a.subscribe('later', () => {})
      await w.until(() => expect(c.peers()[0].service.events.map((e) => e.event)).to.include('later'))
      expect((await w.settle(c.publish('later', null, { timeout: 300 }))).delivered).to.deep.equal([{ group: 'later', endpoint: a.endpoint }])
    })

    if (W.canKill) {
      it('a peer killed while its handler runs: the event is redelivered to another peer of its group, counted', async () => {
        const runs = []
        const a = await w.peer({ events: { 'orders.placed': { group: 'billing', handler: () => new Promise(() => { runs.push('a') }) } } })
        const b = await w.peer({ events: { 'orders.placed': { group: 'billing', handler: () => { runs.push('b') } } } })
        const c = await clientOf([a, b], { strategy: { select: (peers) => peers.find((p) => p.endpoint === a.endpoint) ?? peers[0] } })
        const published = c.publish('orders.placed', { n: 1 }, { timeout: 5000 })
        await w.until(() => expect(runs).to.deep.equal(['a']))
        w.kill(a)
        expect((await w.settle(published)).delivered).to.deep.equal([{ group: 'billing', endpoint: b.endpoint }])
        expect(runs).to.deep.equal(['a', 'b'])
        expect(c.stats().events.redelivered).to.equal(1)
      })

      it('a broadcast to a member that died: reported unreached, the others delivered', async () => {
        const a = await w.peer({ events: { tick: () => {} } })
        const b = await w.peer({ seeds: [a.endpoint], events: { tick: () => {} } })
        const c = await clientOf([a, b])
        const gone = b.endpoint
        w.kill(b)
        const out = await w.settle(c.broadcast('tick', null, { timeout: 3000 }))
        expect(out.delivered).to.deep.equal([{ endpoint: a.endpoint }])
        expect(out.unreached.map((u) => u.endpoint)).to.deep.equal([gone])
      })
    }
  })
}
