// The Client's public surface that zeromesh/nest is built on (issue 74, item 3), in every world
// (test/helpers/worlds.js): close({ drain }) lets the calls in flight settle within its bound
// and takes no new call; deadline() is time left on the client's own clock, checked as a
// request's timeout; howServed() says how a method is served, or that none serves it, or that
// no peer was ever up; serversOf() lists every peer that serves a method; the `endpoint`
// option pins a call to one peer.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'

for (const W of WORLDS) {
  describe(`the client's surface for callers built on it (${W.name})`, function () {
    this.timeout(20000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    /** Resolves `value` after `ms` of the world's time (the virtual clock's, or real time). */
    const later = (ms, value) => new Promise((resolve) => (w.clock ?? globalThis).setTimeout(() => resolve(value), ms))

    async function clientOf (peers, options = {}) {
      const c = w.client({ seeds: peers.map((p) => p.endpoint), ...options })
      await w.until(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(peers.length))
      return c
    }

    it('close({ drain }) lets the calls in flight settle and refuses new ones; past the drain, what is left fails ClosedError', async () => {
      const a = await w.peer({ handlers: { slow: (ms) => later(ms, ms) } })
      const c = await clientOf([a])
      const inFlight = c.request('slow', 300)
      const closing = c.close({ drain: 2000 })
      expect((await failure(w, c.request('slow', 1))).code).to.equal('ERR_ZEROMESH_CLOSED')
      expect(await w.settle(inFlight)).to.equal(300)
      await w.settle(closing)
      const d = await clientOf([a])
      const cut = d.request('slow', 5000, { timeout: 10000 }).then(() => null, (err) => err)
      const t0 = (w.clock ?? performance).now()
      await w.settle(d.close({ drain: 200 }))
      expect((w.clock ?? performance).now() - t0).to.be.within(150, 3000) // the drain's bound, not the call's 5 s
      expect((await w.settle(cut))?.code).to.equal('ERR_ZEROMESH_CLOSED')
      expect((await failure(w, w.client({ seeds: [a.endpoint] }).close({ drain: -1 }))).code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    })

    it('deadline() counts on the client\'s clock from its timeout, and checks the timeout as a request\'s', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x } })
      const c = await clientOf([a], { timeout: 4000 })
      const d = c.deadline()
      expect(d.timeout).to.equal(4000)
      await w.pass(250) // the subject, not a condition: time passes, and what is left shrinks
      expect(d.left()).to.be.within(1, 3800)
      expect(d.passed).to.equal(false)
      const short = c.deadline(100)
      expect(await w.settle(short.within(later(5000, 'late')))).to.equal(undefined) // the deadline came first
      expect(short.passed).to.equal(true)
      expect(short.left()).to.equal(1)
      expect(await w.settle(c.deadline(5000).within(Promise.resolve('now')))).to.equal('now')
      expect(() => c.deadline(0)).to.throw(/timeout/)
      expect(() => c.deadline(1.5)).to.throw(/timeout/)
    })

    it('howServed() tells a request from a stream, says null when the peers known serve no such method, and NoPeersError (neverUp) when no seed answers', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x, async * items () { yield 1 } } })
      const c = await clientOf([a])
      expect(await w.settle(c.howServed('echo'))).to.equal('request')
      expect(await w.settle(c.howServed('items'))).to.equal('stream')
      expect(await w.settle(c.howServed('nothing', { timeout: 1000 }))).to.equal(null)
      const lone = w.client({ seeds: ['tcp://127.0.0.1:9'] })
      const err = await failure(w, lone.howServed('echo', { timeout: 5000, connectTimeout: 200 }))
      expect(err).to.include({ code: 'ERR_ZEROMESH_NO_PEERS', neverUp: true })
      expect(err.message).to.include('within 200 ms')
      expect((await failure(w, c.howServed('echo', { wait: 1 }))).code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    })

    it('serversOf() gives every peer that serves a method; endpoint pins a request and a stream to one of them', async () => {
      const who = { whoami: (x, ctx) => ctx.endpoint, async * whoStream (x, ctx) { yield ctx.endpoint } }
      const a = await w.peer({ handlers: who })
      const b = await w.peer({ seeds: [a.endpoint], handlers: who })
      const c = await clientOf([a, b])
      expect((await w.settle(c.serversOf('whoami'))).sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
      const answers = await w.settle(Promise.all(Array.from({ length: 8 }, () => c.request('whoami', null, { endpoint: b.endpoint }))))
      expect(new Set(answers)).to.deep.equal(new Set([b.endpoint]))
      const items = []
      await w.settle((async () => { for await (const x of c.stream('whoStream', null, { endpoint: a.endpoint })) items.push(x) })())
      expect(items).to.deep.equal([a.endpoint])
      expect((await failure(w, c.serversOf('nothing', { timeout: 300 }))).code).to.equal('ERR_ZEROMESH_NO_PEERS')
      expect((await failure(w, c.publish('x', null, { endpoint: a.endpoint }))).message).to.match(/leave out endpoint/)
      expect((await failure(w, c.gather('whoami', null, { endpoint: a.endpoint }))).message).to.match(/endpoint/)
    })
  })
}
