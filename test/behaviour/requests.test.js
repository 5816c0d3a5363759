// What a request does, in every world (test/helpers/worlds.js: the in-memory network on a
// virtual clock, and real ZeroMQ on 127.0.0.1): a reply, the errors by code, a deadline, a busy
// peer's place waited for, a stopping peer's refusal, a caller's abort; and in the memory world
// a peer killed under load.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'
import { Values } from '../../runtime/values.js'

for (const W of WORLDS) {
  describe(`requests (${W.name})`, function () {
    this.timeout(20000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    it('a reply; a client that knows one seed learns the other peer and uses both', async () => {
      const a = await w.peer({ handlers: { whoami: (args, ctx) => ctx.endpoint } })
      const b = await w.peer({ seeds: [a.endpoint], handlers: { whoami: (args, ctx) => ctx.endpoint } })
      await w.until(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(2))
      const c = w.client({ seeds: [a.endpoint] })
      await w.until(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(2))
      const seen = new Set()
      for (let i = 0; i < 40; i++) seen.add(await w.settle(c.request('whoami', null)))
      expect([...seen].sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
    })

    it('several results (PROTOCOL.md 4.2.3): each in order to a caller that asks for values, the last to one that does not; one result is one value', async () => {
      const a = await w.peer({ handlers: { sums: () => new Values([1, 3, 6]), none: async () => new Values([]), one: () => 7 } })
      const c = w.client({ seeds: [a.endpoint] })
      expect(await w.settle(c.request('sums', null, { values: true }))).to.deep.equal([1, 3, 6])
      expect(await w.settle(c.request('sums', null))).to.equal(6)
      expect(await w.settle(c.request('none', null, { values: true }))).to.deep.equal([])
      expect(await w.settle(c.request('none', null))).to.equal(null)
      expect(await w.settle(c.request('one', null, { values: true }))).to.deep.equal([7])
      expect(await w.settle(c.request('one', null))).to.equal(7)
      expect((await failure(w, c.publish('sums', null, { values: true }))).code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    })

    it('gather: every peer that serves the method answers, each reported: replies, a handler\'s failure, a silent peer unreached at the deadline', async () => {
      const a = await w.peer({ handlers: { who: (args, ctx) => ctx.endpoint } })
      const b = await w.peer({ seeds: [a.endpoint], handlers: { who: (args, ctx) => ctx.endpoint } })
      const f = await w.peer({ seeds: [a.endpoint], handlers: { who: () => { throw Object.assign(new Error('no'), { code: 'E_NO' }) } } })
      const s = await w.peer({ seeds: [a.endpoint], handlers: { who: () => new Promise(() => {}) } })
      await w.peer({ seeds: [a.endpoint], handlers: { other: () => 1 } }) // serves something else: not asked
      await w.until(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(5))
      const c = w.client({ seeds: [a.endpoint] })
      const out = await w.settle(c.gather('who', null, { timeout: 1000 }))
      expect(out.replies).to.deep.equal([a, b].map((p) => ({ endpoint: p.endpoint, value: p.endpoint })).sort((x, y) => x.endpoint < y.endpoint ? -1 : 1))
      expect(out.failed.map((x) => [x.endpoint, x.error.remoteCode])).to.deep.equal([[f.endpoint, 'E_NO']])
      expect(out.unreached.map((x) => x.endpoint)).to.deep.equal([s.endpoint])
      expect((await failure(w, c.gather('who', null, { key: 'k' }))).code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect((await failure(w, c.gather('nobody', null, { timeout: 300 }))).code).to.equal('ERR_ZEROMESH_NO_PEERS')
    })

    it('a call that waited for a busy peer\'s place until its deadline fails BUSY, never NO_PEERS (the peer was up all along)', async () => {
      const a = await w.peer({ maxInflight: 1, handlers: { hold: (args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)) } })
      const c = w.client({ seeds: [a.endpoint] })
      const first = c.request('hold', null, { timeout: 2000, idempotent: false }).catch(() => {}) // holds the one place until its deadline
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      const second = failure(w, c.request('hold', null, { timeout: 600 })) // refused busy: waits for the place
      await w.until(() => expect(c.stats().waiting).to.equal(1))
      const third = failure(w, c.request('hold', null, { timeout: 300 })) // the peer is marked busy: it waits, never refused itself
      expect([(await third).code, (await second).code]).to.deep.equal(['ERR_ZEROMESH_BUSY', 'ERR_ZEROMESH_BUSY'])
      await w.settle(first)
    })

    it('errors by code: an unknown method at once, a handler\'s throw with its code, a bad argument before sending', async () => {
      const a = await w.peer({ handlers: { boom: () => { throw Object.assign(new Error('no stock'), { code: 'E_STOCK' }) } } })
      const c = w.client({ seeds: [a.endpoint] })
      expect((await failure(w, c.request('nope'))).code).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD')
      const err = await failure(w, c.request('boom'))
      expect([err.code, err.remoteCode, err.message]).to.deep.equal(['ERR_ZEROMESH_REMOTE', 'E_STOCK', 'no stock'])
      expect((await failure(w, c.request('boom', null, { timeout: -1 }))).code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    })

    it('a deadline: no reply in time fails ERR_ZEROMESH_TIMEOUT, and the handler\'s signal aborts at its deadline', async () => {
      let aborted = false
      // It never answers: one that answered at its abort could beat the client's own timer (the two deadlines are the same instant).
      const a = await w.peer({ handlers: { hang: (args, ctx) => new Promise(() => ctx.signal.addEventListener('abort', () => { aborted = true })) } })
      const c = w.client({ seeds: [a.endpoint] })
      expect((await failure(w, c.request('hang', null, { timeout: 300 }))).code).to.equal('ERR_ZEROMESH_TIMEOUT')
      await w.until(() => expect(aborted).to.equal(true))
    })

    it('a busy peer: a call waits for a place within its deadline and is served, never run twice', async () => {
      let release
      const gate = new Promise((resolve) => { release = resolve })
      let runs = 0
      const a = await w.peer({ maxInflight: 1, handlers: { hold: () => gate, echo: (x) => { runs++; return x } } })
      const c = w.client({ seeds: [a.endpoint] })
      const held = c.request('hold', null, { timeout: 5000 })
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      const waiting = c.request('echo', 'after', { timeout: 5000 })
      await w.until(() => expect(a.stats().busy).to.be.at.least(1)) // refused busy: it waits for the place
      release('done')
      expect(await w.settle(waiting)).to.equal('after')
      expect(await w.settle(held)).to.equal('done')
      expect(runs).to.equal(1)
    })

    it('a stopping peer: its call in flight finishes, new calls go to the other peer', async () => {
      let release
      const gate = new Promise((resolve) => { release = resolve })
      const a = await w.peer({ handlers: { hold: () => gate, whoami: (args, ctx) => ctx.endpoint } })
      const b = await w.peer({ seeds: [a.endpoint], handlers: { whoami: (args, ctx) => ctx.endpoint } })
      const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: 'round-robin' })
      await w.until(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(2))
      const held = c.request('hold', null, { timeout: 5000 })
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      const stopping = a.stop()
      const after = []
      for (let i = 0; i < 6; i++) after.push(await w.settle(c.request('whoami', null, { idempotent: false })))
      expect(new Set(after)).to.deep.equal(new Set([b.endpoint]))
      release('finished')
      expect(await w.settle(held)).to.equal('finished')
      await w.settle(stopping)
    })

    it('an abort: the call fails ERR_ZEROMESH_ABORTED at once, and the peer\'s handler hears it', async () => {
      let aborted = false
      const a = await w.peer({ handlers: { hang: (args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => { aborted = true; resolve() })) } })
      const c = w.client({ seeds: [a.endpoint] })
      const ac = new AbortController()
      const call = c.request('hang', null, { timeout: 5000, signal: ac.signal })
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      ac.abort()
      expect((await failure(w, call)).code).to.equal('ERR_ZEROMESH_ABORTED')
      await w.until(() => expect(aborted).to.equal(true))
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
    }
  })
}
