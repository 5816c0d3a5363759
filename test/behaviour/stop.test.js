// What a peer's graceful stop does, in every world (test/helpers/worlds.js): its requests in
// flight finish before it closes; new calls go to another peer, none failing, idempotent or
// not; with no other peer they fail DRAINING at their deadline; drainTimeout bounds work that
// never ends; stop() is idempotent and a stopped peer does not start again. What only real
// sockets show (the quiet window to a raw socket, a taken port): integration/stop.test.js.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'
import { Peer } from '../../index.js'

for (const W of WORLDS) {
  describe(`graceful stop (${W.name})`, function () {
    this.timeout(20000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    const handlers = () => ({ sleep: (ms, ctx) => w.after(ms, ctx.endpoint), whoami: (args, ctx) => ctx.endpoint })

    it('finishes requests in flight before closing', async () => {
      const p = await w.peer({ handlers: handlers() })
      const ep = p.endpoint
      const c = w.client({ seeds: [ep] })
      await w.settle(c.request('whoami'))
      const inflight = Array.from({ length: 20 }, () => c.request('sleep', 200))
      await w.until(() => expect(p.stats().inflight).to.equal(20))
      const t0 = w.now()
      await w.settle(p.stop())
      expect(w.now() - t0).to.be.at.least(100) // it waited for them
      expect(await w.settle(Promise.all(inflight))).to.deep.equal(Array(20).fill(ep))
      expect(p.state).to.equal('stopped')
    })

    it('a stopping peer: its calls in flight finish, new calls go to the other peer, none fails, idempotent or not; the client stops using it', async () => {
      let release
      const gate = new Promise((resolve) => { release = resolve })
      const a = await w.peer({ handlers: { ...handlers(), hold: () => gate } })
      const b = await w.peer({ seeds: [a.endpoint], handlers: handlers() })
      const ep = a.endpoint
      const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: 'round-robin', idempotent: false })
      await w.until(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(2))
      const held = c.request('hold', null, { timeout: 5000 })
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      const slow = Array.from({ length: 10 }, () => c.request('sleep', 300))
      await w.until(() => expect(a.stats().inflight + b.stats().inflight).to.equal(11))
      const stopping = a.stop()
      const during = []
      for (let i = 0; i < 40; i++) during.push(await w.settle(c.request('whoami')))
      expect(new Set(during)).to.deep.equal(new Set([b.endpoint]))
      release('finished')
      expect(await w.settle(held)).to.equal('finished')
      await w.settle(stopping)
      const results = await w.settle(Promise.allSettled(slow))
      expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([])
      // The client stopped using A: from a DRAINING answer, or from the leave in the member list.
      await w.until(() => expect(c.peers().some((x) => x.endpoint === ep && x.state === 'up')).to.equal(false))
    })

    it('with a single peer, a request during the drain fails with ERR_ZEROMESH_DRAINING at its deadline', async () => {
      const a = await w.peer({ handlers: handlers() })
      const ep = a.endpoint
      const c = w.client({ seeds: [ep] })
      await w.settle(c.request('whoami'))
      const slow = c.request('sleep', 600)
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      const stopping = a.stop()
      expect((await failure(w, c.request('whoami', null, { timeout: 200 }))).code).to.equal('ERR_ZEROMESH_DRAINING')
      expect(await w.settle(slow)).to.equal(ep)
      await w.settle(stopping)
    })

    it('drainTimeout bounds the wait for work that never ends', async () => {
      const p = await w.peer({ handlers: { never: () => new Promise(() => {}) }, drainTimeout: 150 })
      const c = w.client({ seeds: [p.endpoint] })
      const pending = c.request('never', null, { timeout: 600 }).catch((err) => err)
      await w.until(() => expect(p.stats().inflight).to.equal(1))
      const t0 = w.now()
      await w.settle(p.stop())
      expect(w.now() - t0).to.be.within(100, 1500)
      expect((await w.settle(pending)).code).to.equal('ERR_ZEROMESH_TIMEOUT')
    })

    it('stop() is idempotent, start() after stop() is refused, stop() before start() is fine', async () => {
      const p = await w.peer({ handlers: handlers() })
      const s1 = p.stop()
      expect(p.stop()).to.equal(s1)
      await w.settle(s1)
      expect((await failure(w, p.start())).code).to.equal('ERR_ZEROMESH_CLOSED')
      const never = new Peer({ handlers: handlers() })
      await never.stop()
      expect(never.state).to.equal('stopped')
    })
  })
}
