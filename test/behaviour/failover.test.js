// Failover as a caller sees it, in every world (test/helpers/worlds.js), the rules of
// client/failover.js with real peers: an idempotent attempt that outlives attemptTimeout goes
// to another peer and its first answer wins, one that is not idempotent waits for its answer;
// a draining peer's refusal costs no attempt; a peer killed under idempotent load fails no
// call, and a call lost with its peer moves to another when it is idempotent and fails
// ERR_ZEROMESH_CONNECTION_LOST when not (the memory world kills a host; real processes
// killed: test/process). The decisions themselves, case by case, on a
// fake transport: unit/client-failover.test.js and protocol/failover-table.json.
import { expect } from 'chai'
import { WORLDS } from '../helpers/worlds.js'
import { answerDraining } from '../helpers/insides.js'

const upCount = (c) => c.peers().filter((p) => p.state === 'up').length
/** A strategy that takes the peers in the order given while they are there (the one to fail first). */
const inOrder = (...endpoints) => ({ select: (peers) => endpoints.map((ep) => peers.find((p) => p.endpoint === ep)).find(Boolean) ?? peers[0] })

for (const W of WORLDS) {
  describe(`failover (${W.name})`, function () {
    this.timeout(20000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    /** Peer a answers `work` after `slowMs`, peer b at once; each counts what it ran. */
    async function slowAndQuick (slowMs) {
      const ran = { a: 0, b: 0 }
      const a = await w.peer({ handlers: { work: () => { ran.a++; return w.after(slowMs, 'a') } } })
      const b = await w.peer({ seeds: [a.endpoint], handlers: { work: () => { ran.b++; return 'b' } } })
      return { a, b, ran }
    }

    it('an idempotent attempt that outlives attemptTimeout goes to another peer, and its answer wins', async () => {
      const { a, b, ran } = await slowAndQuick(3000)
      const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: inOrder(a.endpoint, b.endpoint), attemptTimeout: 100 })
      await w.until(() => expect(upCount(c)).to.equal(2))
      const t0 = w.now()
      expect(await w.settle(c.request('work', null, { idempotent: true, timeout: 5000 }))).to.equal('b')
      expect(w.now() - t0).to.be.below(1000) // not a's 3 s
      expect(ran).to.deep.equal({ a: 1, b: 1 })
      expect(c.stats()).to.include({ attemptTimeouts: 1, retries: 1 })
    })

    it('one that is not idempotent is never sent twice: it waits for its answer past attemptTimeout', async () => {
      const { a, b, ran } = await slowAndQuick(500)
      const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: inOrder(a.endpoint, b.endpoint), attemptTimeout: 100 })
      await w.until(() => expect(upCount(c)).to.equal(2))
      const t0 = w.now()
      expect(await w.settle(c.request('work', null, { idempotent: false, timeout: 5000 }))).to.equal('a')
      expect(w.now() - t0).to.be.at.least(500)
      expect(ran).to.deep.equal({ a: 1, b: 0 })
      expect(c.stats()).to.include({ retries: 0 })
    })

    it('a draining peer\'s refusal is not an attempt: two draining peers, then a live third, with maxAttempts 1, idempotent or not', async () => {
      const handlers = { whoami: (args, ctx) => ctx.endpoint }
      const a = await w.peer({ handlers })
      const b = await w.peer({ seeds: [a.endpoint], handlers })
      const d = await w.peer({ seeds: [a.endpoint], handlers })
      answerDraining(a) // each answers DRAINING from now on, as a stopping peer does, and stays up
      answerDraining(b)
      const c = w.client({ seeds: [a.endpoint, b.endpoint, d.endpoint], strategy: inOrder(a.endpoint, b.endpoint, d.endpoint), maxAttempts: 1, discover: false })
      await w.until(() => expect(upCount(c)).to.equal(3))
      for (const idempotent of [true, false]) expect(await w.settle(c.request('whoami', null, { idempotent }))).to.equal(d.endpoint)
      expect(c.stats().retries).to.equal(0) // a refusal moves the call; it spends no retry
    })

    if (W.canKill) {
      it('a peer killed under idempotent load: no call fails, the others take its share', async () => {
        const a = await w.peer({ handlers: { work: (args, ctx) => new Promise((resolve) => setTimeout(resolve, 0, ctx.endpoint)) } })
        const b = await w.peer({ seeds: [a.endpoint], handlers: { work: (args, ctx) => ctx.endpoint } })
        const d = await w.peer({ seeds: [a.endpoint], handlers: { work: (args, ctx) => ctx.endpoint } })
        const c = w.client({ seeds: [a.endpoint, b.endpoint, d.endpoint] })
        await w.until(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(3))
        const calls = Array.from({ length: 60 }, () => c.request('work', null, { idempotent: true, timeout: 5000 }))
        w.kill(b)
        const out = await w.settle(Promise.allSettled(calls))
        expect(out.filter((r) => r.status === 'rejected').map((r) => r.reason.code)).to.deep.equal([])
        const after = await w.settle(Promise.all(Array.from({ length: 20 }, () => c.request('work', null, { idempotent: true, timeout: 5000 }))))
        expect(after).to.not.include(b.endpoint)
      })

      it('a call lost with its peer: an idempotent one moves to another peer and is answered; one that is not fails ERR_ZEROMESH_CONNECTION_LOST, retryable false', async () => {
        const ran = { a: 0, b: 0 }
        const a = await w.peer({ handlers: { work: () => { ran.a++; return new Promise(() => {}) } } }) // holds it until it dies
        const b = await w.peer({ seeds: [a.endpoint], handlers: { work: () => { ran.b++; return 'b' } } })
        const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: inOrder(a.endpoint, b.endpoint), heartbeatInterval: 100, heartbeatTimeout: 500 })
        await w.until(() => expect(upCount(c)).to.equal(2))
        const moved = c.request('work', null, { idempotent: true, timeout: 10000 })
        const lost = c.request('work', null, { idempotent: false, timeout: 10000 }).then(() => null, (err) => err)
        await w.until(() => expect(ran.a).to.equal(2))
        w.kill(a)
        expect(await w.settle(moved)).to.equal('b')
        const err = await w.settle(lost)
        expect(err).to.include({ code: 'ERR_ZEROMESH_CONNECTION_LOST', retryable: false })
        expect(err.message).to.match(/it is not idempotent, so it was not retried, and it may or may not have run/)
        expect(ran.b).to.equal(1) // the idempotent one only
      })
    }
  })
}
