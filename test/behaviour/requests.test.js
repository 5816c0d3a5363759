// What a request does, in every world (test/helpers/worlds.js: the in-memory network on a
// virtual clock, and real ZeroMQ on 127.0.0.1): a reply of any value, the handler's context,
// the errors by code, a deadline, a busy peer's place waited for, a caller's abort, closing,
// round robin, the peers' states. Argument and size checks: request-checks.test.js; a stopping
// peer: stop.test.js; retries, refusals and peers lost: failover.test.js.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'
import { Values } from '../../runtime/values.js'
import { RemoteError, ZeromeshError, TimeoutError } from '../../index.js'

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

    it('errors by code: an unknown method at once (inherited names too), a handler\'s throw with its code, a bad argument before sending', async () => {
      // eslint-disable-next-line prefer-promise-reject-errors
      const a = await w.peer({ handlers: { boom: () => { throw Object.assign(new Error('no stock'), { code: 'E_STOCK' }) }, rejectString: () => Promise.reject('plain string') } })
      const c = w.client({ seeds: [a.endpoint] })
      const unknown = await failure(w, c.request('nope'))
      expect(unknown.code).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD')
      expect(unknown.message).to.contain('nope')
      for (const inherited of ['toString', 'constructor']) expect((await failure(w, c.request(inherited))).code).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD')
      const err = await failure(w, c.request('boom'))
      expect([err.code, err.remoteCode, err.message]).to.deep.equal(['ERR_ZEROMESH_REMOTE', 'E_STOCK', 'no stock'])
      expect(err).to.be.instanceOf(RemoteError).and.instanceOf(ZeromeshError)
      expect(err.retryable).to.equal(false)
      const plain = await failure(w, c.request('rejectString'))
      expect([plain.code, plain.message, plain.remoteCode]).to.deep.equal(['ERR_ZEROMESH_REMOTE', 'plain string', null])
      expect((await failure(w, c.request('boom', null, { timeout: -1 }))).code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    })

    it('a deadline: no reply in time fails ERR_ZEROMESH_TIMEOUT (retryable) at the deadline, the handler\'s signal aborts then, and a late reply is ignored', async () => {
      let abortedAfter = null
      // It answers only well after its abort: one that answered at its abort could beat the client's own timer (the two deadlines are the same instant).
      const a = await w.peer({
        handlers: {
          hang: (args, ctx) => { const t0 = w.now(); return new Promise((resolve) => ctx.signal.addEventListener('abort', () => { abortedAfter = w.now() - t0; resolve(w.after(300)) })) },
          slow: (ms) => w.after(ms, 'late'),
          echo: (x) => x,
        },
      })
      const c = w.client({ seeds: [a.endpoint] })
      const err = await failure(w, c.request('hang', null, { timeout: 300 }))
      expect(err.code).to.equal('ERR_ZEROMESH_TIMEOUT')
      expect(err).to.be.instanceOf(TimeoutError)
      expect(err.retryable).to.equal(true)
      await w.until(() => expect(abortedAfter).to.be.within(150, 400)) // from the handler's start, which may come after the request's arrival
      await w.until(() => expect(a.stats().inflight).to.equal(0))
      const t0 = w.now()
      expect((await failure(w, c.request('slow', 400, { timeout: 100 }))).code).to.equal('ERR_ZEROMESH_TIMEOUT')
      expect(w.now() - t0).to.be.within(90, 390)
      expect(await w.settle(c.request('echo', 'after'))).to.equal('after') // the late reply confused nothing
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

    it('an abort: the call fails ERR_ZEROMESH_ABORTED at once with the reason as its cause, and the peer\'s handler hears it; a signal aborted before the call fails it too', async () => {
      let aborted = false
      const a = await w.peer({ handlers: { hang: (args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => { aborted = true; resolve() })), echo: (x) => x } })
      const c = w.client({ seeds: [a.endpoint] })
      const ac = new AbortController()
      const call = c.request('hang', null, { timeout: 5000, signal: ac.signal })
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      ac.abort(new Error('user gave up'))
      const err = await failure(w, call)
      expect(err.code).to.equal('ERR_ZEROMESH_ABORTED')
      expect(err.cause.message).to.equal('user gave up')
      await w.until(() => expect(aborted).to.equal(true))
      expect((await failure(w, c.request('echo', 1, { signal: AbortSignal.abort() }))).code).to.equal('ERR_ZEROMESH_ABORTED')
    })

    it('returns what the handler returns, sync or async, for many value types', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x, asyncEcho: async (x) => x } })
      const c = w.client({ seeds: [a.endpoint] })
      const values = [null, true, 0, -1.5, 2 ** 53 - 1, 'text', 'ü€😀', [1, [2, [3]]], { a: { b: [null, 'x'] } }, Buffer.from([1, 2, 3]), new Date(86400000)]
      for (const v of values) {
        expect(await w.settle(c.request('echo', v))).to.deep.equal(v)
        expect(await w.settle(c.request('asyncEcho', v))).to.deep.equal(v)
      }
      expect(await w.settle(c.request('echo'))).to.equal(undefined)
    })

    it('gives the handler a context: method, endpoint, deadline, request id', async () => {
      const a = await w.peer({ handlers: { ctx: (args, ctx) => ({ method: ctx.method, endpoint: ctx.endpoint, timeoutMs: ctx.timeoutMs, id: ctx.requestId }) } })
      const c = w.client({ seeds: [a.endpoint] })
      const out = await w.settle(c.request('ctx', null, { timeout: 1234 }))
      expect(out.method).to.equal('ctx')
      expect(out.endpoint).to.equal(a.endpoint)
      expect(out.timeoutMs).to.be.within(1200, 1234)
      expect(out.id).to.be.a('number')
    })

    it('close() rejects pending and later requests with ERR_ZEROMESH_CLOSED; twice is fine', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x, slow: (ms) => w.after(ms) } })
      const c = w.client({ seeds: [a.endpoint] })
      await w.settle(c.request('echo', 1))
      const pending = c.request('slow', 500).catch((err) => err)
      await w.settle(c.close())
      expect((await w.settle(pending)).code).to.equal('ERR_ZEROMESH_CLOSED')
      expect((await failure(w, c.request('echo', 1))).code).to.equal('ERR_ZEROMESH_CLOSED')
      await w.settle(c.close())
    })

    it('a dead seed list fails ERR_ZEROMESH_NO_PEERS within the deadline, naming the seeds, each down', async () => {
      const c = w.client({ seeds: ['tcp://127.0.0.1:1', 'tcp://127.0.0.1:2'] })
      const t0 = w.now()
      const err = await failure(w, c.request('echo', 1, { timeout: 300 }))
      expect(err.code).to.equal('ERR_ZEROMESH_NO_PEERS')
      expect(w.now() - t0).to.be.below(1000)
      expect(err.message).to.contain('tcp://127.0.0.1:1')
      expect(c.peers().map((x) => x.state)).to.deep.equal(['down', 'down'])
    })

    it('a peer at its maxInflight answers busy and the client goes to another peer', async () => {
      const handlers = { echo: (x) => x, slow: (ms) => w.after(ms, ms) }
      const a = await w.peer({ handlers, maxInflight: 1 })
      const b = await w.peer({ handlers, maxInflight: 1 })
      const c = w.client({ seeds: [a.endpoint, b.endpoint] })
      await w.settle(c.request('echo', 1))
      await w.until(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(2))
      const out = await w.settle(Promise.all([c.request('slow', 200), c.request('slow', 200)]))
      expect(out).to.deep.equal([200, 200])
      expect(a.stats().ok + b.stats().ok).to.be.at.least(3)
      expect(a.stats().busy + b.stats().busy).to.be.at.most(2)
    })

    it('every peer busy until the deadline: the request waits without asking again, then ERR_ZEROMESH_BUSY (retryable)', async () => {
      const a = await w.peer({ handlers: { slow: (ms) => w.after(ms, ms) }, maxInflight: 1 })
      const c = w.client({ seeds: [a.endpoint] })
      const first = c.request('slow', 600)
      await w.until(() => expect(a.stats().inflight).to.equal(1))
      const err = await failure(w, c.request('slow', 10, { timeout: 300 }))
      expect(err.code).to.equal('ERR_ZEROMESH_BUSY')
      expect(err.retryable).to.equal(true)
      expect(a.stats().busy).to.equal(1) // it waited: the request in flight there would tell when a place freed, so no probe
      expect(c.stats()).to.include({ waited: 1, probes: 0 })
      expect(await w.settle(first)).to.equal(600)
    })

    it('round robin alternates exactly between two peers', async () => {
      const handlers = { whoami: (args, ctx) => ctx.endpoint }
      const a = await w.peer({ handlers })
      const b = await w.peer({ handlers })
      const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: 'round-robin' })
      await w.until(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(2))
      const seen = []
      for (let i = 0; i < 10; i++) seen.push(await w.settle(c.request('whoami')))
      for (let i = 2; i < seen.length; i++) expect(seen[i]).to.equal(seen[i - 2])
      expect(seen[0]).to.not.equal(seen[1])
    })

    it('peers() and the peer event report the state each peer is in; stats() counts the request', async () => {
      const a = await w.peer({ handlers: { echo: (x) => x } })
      const c = w.client({ seeds: [a.endpoint] })
      const events = []
      c.on('peer', (x) => events.push(x.state))
      await w.settle(c.request('echo', 1))
      const [info] = c.peers()
      expect(info).to.include({ endpoint: a.endpoint, state: 'up', inflight: 0, failures: 0 })
      expect(info.latencyMs).to.be.a('number')
      expect(events).to.deep.equal(['up'])
      expect(c.stats()).to.include({ requests: 1, ok: 1, inflight: 0 })
    })
  })
}
