// What an event does, in every world (test/helpers/worlds.js): a publish acked by one peer of
// each group, once; no subscriber waited for within the deadline; a broadcast reported peer by
// peer; a handler that never finishes held to the deadline; and in the memory world (a virtual
// clock, hosts that die) a redelivery after a lost peer and a broadcast's unreached member.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'

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

    it('a publish is acked by one peer of each group, each event handled once per group', async () => {
      const runs = { billing: [], shipping: [] }
      const peerOf = (group) => w.peer({ events: { 'orders.placed': { group, handler: (o) => { runs[group].push(o.n) } } } })
      const peers = [await peerOf('billing'), await peerOf('billing'), await peerOf('shipping')]
      const c = await clientOf(peers)
      const out = await w.settle(Promise.all(Array.from({ length: 30 }, (_, n) => c.publish('orders.placed', { n }))))
      for (const o of out) expect(o.delivered.map((d) => d.group)).to.deep.equal(['billing', 'shipping'])
      for (const group of ['billing', 'shipping']) expect(runs[group].sort((x, y) => x - y), group).to.deep.equal(Array.from({ length: 30 }, (_, n) => n))
      expect(c.stats().events).to.include({ deliveries: 60, ok: 60, failed: 0, redelivered: 0 })
    })

    it('no subscriber: the publish waits within its deadline, fails ERR_ZEROMESH_NO_SUBSCRIBERS, and one that subscribes in time gets it', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x } })
      const c = await clientOf([a])
      expect((await failure(w, c.publish('orders.placed', {}, { timeout: 300 }))).code).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
      const got = []
      const waiting = c.publish('orders.placed', { n: 1 }, { timeout: 5000 })
      await w.pass(100) // the subject, not a condition: the subscriber comes a while into the publish's wait
      a.subscribe('orders.placed', (o) => { got.push(o.n) })
      expect((await w.settle(waiting)).delivered).to.deep.equal([{ group: 'orders.placed', endpoint: a.endpoint }])
      expect(got).to.deep.equal([1])
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
