// The request path end to end over real ZeroMQ sockets: results, every coded error,
// deadlines, cancellation, limits and closing.
import { expect } from 'chai'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { Peer, Client, RemoteError, ZeromeshError, TimeoutError } from '../../index.js'

const aborts = []
const handlers = {
  echo: (args) => args,
  asyncEcho: async (args) => args,
  boom: () => { throw Object.assign(new Error('it broke'), { code: 'E_BROKE' }) },
  rejectString: () => Promise.reject('plain string'), // eslint-disable-line prefer-promise-reject-errors
  slow: (args, ctx) => new Promise((resolve) => setTimeout(resolve, args.ms, { ms: args.ms, remaining: ctx.remaining() })),
  deadline: (args, ctx) => new Promise((resolve) => {
    const t0 = Date.now()
    ctx.signal.addEventListener('abort', () => {
      aborts.push(Date.now() - t0)
      setTimeout(resolve, 300) // reply only after the client gave up
    })
  }),
  ctx: (args, ctx) => ({ method: ctx.method, endpoint: ctx.endpoint, timeoutMs: ctx.timeoutMs, id: ctx.requestId }),
  big: (args) => 'x'.repeat(args.n),
}

describe('request/reply over ZeroMQ', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  it('replies coalesced into one frame never pass the default frame limit, whatever the peer\'s own (a client at the default drops a larger frame)', async () => {
    const p = await h.peer({ handlers: { big: () => Buffer.alloc(600000, 1) }, maxMessageSize: 4 * 1024 * 1024 })
    const c = h.client({ seeds: [p.endpoint], timeout: 3000 })
    await c.request('big')
    const replies = await Promise.all([1, 2, 3, 4].map(() => c.request('big')))
    expect(replies.map((r) => r.length)).to.deep.equal([600000, 600000, 600000, 600000])
  })

  it('returns what the handler returns, sync or async, for many value types', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const values = [null, true, 0, -1.5, 2 ** 53 - 1, 'text', 'ü€😀', [1, [2, [3]]], { a: { b: [null, 'x'] } }, Buffer.from([1, 2, 3]), new Date(86400000)]
    for (const v of values) {
      expect(await c.request('echo', v)).to.deep.equal(v)
      expect(await c.request('asyncEcho', v)).to.deep.equal(v)
    }
    expect(await c.request('echo')).to.equal(undefined)
  })

  it('gives the handler a context: method, endpoint, deadline', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const out = await c.request('ctx', null, { timeout: 1234 })
    expect(out.method).to.equal('ctx')
    expect(out.endpoint).to.equal(p.endpoint)
    expect(out.timeoutMs).to.be.within(1200, 1234)
    expect(out.id).to.be.a('number')
  })

  it('aborts ctx.signal when the deadline passes', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    await rejectsWith(c.request('deadline', null, { timeout: 200 }), 'ERR_ZEROMESH_TIMEOUT')
    await eventually(() => expect(aborts).to.have.length(1))
    expect(aborts[0]).to.be.within(150, 400)
    await eventually(() => expect(p.stats().inflight).to.equal(0))
  })

  it('a thrown error becomes ERR_ZEROMESH_REMOTE with its message and code', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await rejectsWith(c.request('boom'), 'ERR_ZEROMESH_REMOTE')
    expect(err).to.be.instanceOf(RemoteError).and.instanceOf(ZeromeshError)
    expect(err.message).to.equal('it broke')
    expect(err.remoteCode).to.equal('E_BROKE')
    expect(err.retryable).to.equal(false)
    const err2 = await rejectsWith(c.request('rejectString'), 'ERR_ZEROMESH_REMOTE')
    expect(err2.message).to.equal('plain string')
    expect(err2.remoteCode).to.equal(null)
  })

  it('an unknown method is ERR_ZEROMESH_UNKNOWN_METHOD, also for inherited names', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await rejectsWith(c.request('nope'), 'ERR_ZEROMESH_UNKNOWN_METHOD')
    expect(err.message).to.contain('nope')
    await rejectsWith(c.request('toString'), 'ERR_ZEROMESH_UNKNOWN_METHOD')
    await rejectsWith(c.request('constructor'), 'ERR_ZEROMESH_UNKNOWN_METHOD')
  })

  it('times out with ERR_ZEROMESH_TIMEOUT at the deadline and ignores the late reply', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const t0 = Date.now()
    const err = await rejectsWith(c.request('slow', { ms: 400 }, { timeout: 100 }), 'ERR_ZEROMESH_TIMEOUT')
    expect(Date.now() - t0).to.be.within(90, 390)
    expect(err).to.be.instanceOf(TimeoutError)
    expect(err.retryable).to.equal(true)
    expect(await c.request('echo', 'after')).to.equal('after') // the late reply did not confuse anything
  })

  it('a dead seed list fails with ERR_ZEROMESH_NO_PEERS within the deadline', async () => {
    const c = h.client({ seeds: ['tcp://127.0.0.1:1', 'tcp://127.0.0.1:2'] })
    const t0 = Date.now()
    const err = await rejectsWith(c.request('echo', 1, { timeout: 300 }), 'ERR_ZEROMESH_NO_PEERS')
    expect(Date.now() - t0).to.be.below(1000)
    expect(err.message).to.contain('tcp://127.0.0.1:1')
    expect(c.peers().map((x) => x.state)).to.deep.equal(['down', 'down'])
  })

  it('a request waits for a peer that comes up before its deadline', async () => {
    const probe = new Peer({ bind: 'tcp://127.0.0.1:0' })
    const ep = await probe.start()
    await probe.stop()
    const c = h.client({ seeds: [ep] })
    const pending = c.request('echo', 'late peer', { timeout: 5000 })
    await eventually(() => { // it found no peer there, and waits
      expect(c.peers().map((x) => x.state)).to.deep.equal(['down'])
      expect(c.stats().inflight).to.equal(1)
    })
    await h.peer({ bind: ep, handlers })
    expect(await pending).to.equal('late peer')
  })

  it('AbortSignal cancels with ERR_ZEROMESH_ABORTED, also when aborted before the call', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const ac = new AbortController()
    const pending = c.request('slow', { ms: 300 }, { signal: ac.signal })
    setTimeout(() => ac.abort(new Error('user gave up')), 50)
    const err = await rejectsWith(pending, 'ERR_ZEROMESH_ABORTED')
    expect(err.cause.message).to.equal('user gave up')
    await rejectsWith(c.request('echo', 1, { signal: AbortSignal.abort() }), 'ERR_ZEROMESH_ABORTED')
  })

  it('close() rejects pending and later requests with ERR_ZEROMESH_CLOSED', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    await c.request('echo', 1)
    const pending = c.request('slow', { ms: 500 })
    await c.close()
    await rejectsWith(pending, 'ERR_ZEROMESH_CLOSED')
    await rejectsWith(c.request('echo', 1), 'ERR_ZEROMESH_CLOSED')
    await c.close() // twice is fine
  })

  it('bad arguments reject with ERR_ZEROMESH_INVALID_ARGUMENT', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    await rejectsWith(c.request(42), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    await rejectsWith(c.request(''), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    await rejectsWith(c.request('echo', 1, { timeout: -1 }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    await rejectsWith(c.request('echo', 1, { timeout: 1.5 }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    await rejectsWith(c.request('echo', 1, { idempotent: 'yes' }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    await rejectsWith(c.request('echo', 1, { signal: {} }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    const err = await rejectsWith(c.request('echo', 1, { timeuot: 5 }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.match(/unknown request options key "timeuot".*timeout/)
  })

  it('constructors refuse bad options with ERR_ZEROMESH_INVALID_ARGUMENT', () => {
    const bad = [
      () => new Client(),
      () => new Client({ seeds: [] }),
      () => new Client({ seeds: ['http://x'] }),
      () => new Client({ seeds: ['tcp://127.0.0.1:0'] }),
      () => new Client({ seeds: ['tcp://127.0.0.1:5555'], strategy: 'fastest' }),
      () => new Client({ seeds: ['tcp://127.0.0.1:5555'], timeout: 0 }),
      () => new Client({ seeds: ['tcp://127.0.0.1:5555'], seed: [] }),
      () => new Peer({ handlers: { a: 1 } }),
      () => new Peer({ handlers: [] }),
      () => new Peer({ bind: 'tcp://127.0.0.1:99999' }),
      () => new Peer({ maxInflight: 0 }),
      () => new Peer({ port: 5 }),
    ]
    for (const f of bad) {
      expect(f, f.toString()).to.throw(ZeromeshError).with.property('code', 'ERR_ZEROMESH_INVALID_ARGUMENT')
    }
  })

  it('a request larger than maxMessageSize is refused before it is sent', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint], maxMessageSize: 4096 })
    const err = await rejectsWith(c.request('echo', 'x'.repeat(5000)), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.match(/larger than maxMessageSize 4096/)
    expect(await c.request('echo', 'x'.repeat(3000))).to.have.length(3000)
  })

  it('a reply larger than maxMessageSize becomes a coded remote error, not a lost reply', async () => {
    const p = await h.peer({ handlers, maxMessageSize: 4096 })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await rejectsWith(c.request('big', { n: 10000 }), 'ERR_ZEROMESH_REMOTE')
    expect(err.remoteCode).to.equal('ERR_ZEROMESH_TOO_LARGE')
    expect(await c.request('big', { n: 100 })).to.have.length(100)
  })

  it('the reply size error names the real limit, and a reply just within that limit gets through', async () => {
    const p = await h.peer({ handlers, maxMessageSize: 4096 })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await rejectsWith(c.request('big', { n: 4090 }), 'ERR_ZEROMESH_REMOTE')
    const [, limit] = /larger than the (\d+) bytes a reply may take \(maxMessageSize 4096/.exec(err.message) ?? []
    expect(Number(limit)).to.be.within(4096 - 64, 4095)
    // An entry of a string of n characters takes n + at most 20 bytes (headers, id, status).
    expect(await c.request('big', { n: Number(limit) - 20 })).to.have.length(Number(limit) - 20)
  })

  it('args nested deeper than the peer accepts are refused as invalid', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    let deep = 1
    for (let i = 0; i < 80; i++) deep = [deep]
    const err = await rejectsWith(c.request('echo', deep), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.match(/deeper than 64/)
  })

  it('a peer at its maxInflight answers busy and the client goes to another peer', async () => {
    const a = await h.peer({ handlers, maxInflight: 1 })
    const b = await h.peer({ handlers, maxInflight: 1 })
    const c = h.client({ seeds: [a.endpoint, b.endpoint] })
    await c.request('echo', 1)
    await eventually(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(2))
    const out = await Promise.all([c.request('slow', { ms: 200 }), c.request('slow', { ms: 200 })])
    expect(out).to.have.length(2)
    expect(a.stats().ok + b.stats().ok).to.be.at.least(3)
    expect(a.stats().busy + b.stats().busy).to.be.at.most(2)
  })

  it('every peer busy until the deadline: the request waits without asking again, then ERR_ZEROMESH_BUSY', async () => {
    const a = await h.peer({ handlers, maxInflight: 1 })
    const c = h.client({ seeds: [a.endpoint] })
    const first = c.request('slow', { ms: 600 })
    await eventually(() => expect(a.stats().inflight).to.equal(1))
    const err = await rejectsWith(c.request('slow', { ms: 10 }, { timeout: 300 }), 'ERR_ZEROMESH_BUSY')
    expect(err.retryable).to.equal(true)
    expect(a.stats().busy).to.equal(1) // it waited: the request in flight there would tell when a place freed, so no probe
    expect(c.stats().waited).to.equal(1)
    await first
  })

  it('round robin alternates exactly between two peers', async () => {
    const a = await h.peer({ handlers })
    const b = await h.peer({ handlers })
    const c = h.client({ seeds: [a.endpoint, b.endpoint], strategy: 'round-robin' })
    await eventually(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(2))
    const seen = []
    for (let i = 0; i < 10; i++) seen.push((await c.request('ctx')).endpoint)
    for (let i = 2; i < seen.length; i++) expect(seen[i]).to.equal(seen[i - 2])
    expect(seen[0]).to.not.equal(seen[1])
  })

  it('peers() and the peer event report the state each peer is in', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const events = []
    c.on('peer', (x) => events.push(x.state))
    await c.request('echo', 1)
    const [info] = c.peers()
    expect(info).to.include({ endpoint: p.endpoint, state: 'up', inflight: 0, failures: 0 })
    expect(info.latencyMs).to.be.a('number')
    expect(events).to.deep.equal(['up'])
    expect(c.stats()).to.include({ requests: 1, ok: 1, inflight: 0 })
  })
})
