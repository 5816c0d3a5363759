// Middleware on both sides and request headers (docs/guides/middleware.md), over real sockets
// in one process: the order of a chain, errors from each position, streams, headers in
// threads, what middleware may change, the headers' limits on both ends, and once per call
// on the client whatever the retries.
import { expect } from 'chai'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { rawAsker } from '../helpers/raw.js'
import { RemoteError, InvalidArgumentError, ZeromeshError } from '../../index.js'
import { MessageType, Status, encodeRequest } from '../../protocol/index.js'
import { encodeStreamOpen } from '../../protocol/stream-codec.js'
import { Limits } from '../../protocol/constants.js'

const THREAD_HANDLERS = new URL('../fixtures/headers-handlers.js', import.meta.url)
const handlers = {
  echo: (args, ctx) => ({ args, headers: ctx.headers, method: ctx.method }),
  async * items (args, ctx) { for (let i = 0; i < (args?.n ?? 2); i++) yield { i, tenant: ctx.headers.tenant ?? null } },
}
const tag = (log, name) => async (ctx, next) => { log.push(`${name} ${ctx.kind}`); const r = await next(); log.push(`${name} after`); return r }
const drain = async (it) => { const out = []; for await (const x of it) out.push(x); return out }

describe('middleware and headers', function () {
  this.timeout(20000)
  const h = harness()
  const rawPeer = rawAsker()
  afterEach(async () => {
    rawPeer.close()
    await h.cleanup()
  })


  it('headers travel with requests and streams, frozen in ctx.headers; none is {}', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    expect((await c.request('echo', 1, { headers: { tenant: 'acme', 'x-id': '7' } })).headers).to.deep.equal({ tenant: 'acme', 'x-id': '7' })
    expect((await c.request('echo', 1)).headers).to.deep.equal({})
    expect(await drain(c.stream('items', { n: 2 }, { headers: { tenant: 'b' } }))).to.deep.equal([{ i: 0, tenant: 'b' }, { i: 1, tenant: 'b' }])
    let frozen = null
    p.serve('frozen', (a, ctx) => { frozen = Object.isFrozen(ctx.headers); return null })
    await c.waitFor('frozen')
    await c.request('frozen', null, { headers: { a: '1' } })
    expect(frozen).to.equal(true)
  })

  it('headers reach handlers in worker threads, requests and streams, as a peer middleware left them', async () => {
    const p = await h.peer({ handlers: THREAD_HANDLERS, threads: 1 })
    p.use((ctx, next) => { ctx.headers = { ...ctx.headers, 'x-seen': 'main' }; return next() })
    const c = h.client({ seeds: [p.endpoint] })
    await c.waitFor('headers')
    expect(await c.request('headers', null, { headers: { tenant: 'acme' } })).to.deep.equal({ tenant: 'acme', 'x-seen': 'main' })
    expect(await drain(c.stream('headerItems', null, { headers: { tenant: 'b' } }))).to.deep.equal([{ tenant: 'b', 'x-seen': 'main' }])
  })

  it('the client refuses headers that break the rules before sending; a peer refuses them INVALID_REQUEST (requests and streams)', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const bad = [
      { Authorization: 'x' }, { 'a b': 'x' }, { a: 1 }, { ['k'.repeat(65)]: 'x' }, { a: 'v'.repeat(Limits.maxHeaderValueLength + 1) },
      Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`h${i}`, 'x'])),
      Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`h${i}`, 'v'.repeat(3000)])), // 9,000 characters in all
      ['a'], 'a=b',
    ]
    for (const headers of bad) {
      const err = await rejectsWith(c.request('echo', 1, { headers }), 'ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(err.message).to.include('headers')
      expect(() => c.stream('items', null, { headers })).to.throw(InvalidArgumentError)
    }
    expect(p.stats().requests).to.equal(0) // none was sent
    // From a client that does not check: refused, never run.
    for (const headers of [{ Authorization: 'x' }, 'text', [1], { a: 2 }]) {
      const msg = (await rawPeer.ask(p.endpoint, encodeRequest([[1, 'echo', 1, 1000, null, 1, headers]]))).msg
      expect(msg.type).to.equal(MessageType.REPLY)
      expect(msg.replies[0].status, JSON.stringify(headers)).to.equal(Status.INVALID_REQUEST)
      expect(msg.replies[0].message).to.include('headers')
      const end = (await rawPeer.ask(p.endpoint, encodeStreamOpen(2, 'items', null, 0, 8, 65536, false, null, 1, headers))).msg
      expect(end.type).to.equal(MessageType.STREAM_END)
      expect(end.status).to.equal(Status.INVALID_REQUEST)
    }
    // nil headers, and an element the peer does not know after them (3.1), are served.
    const ok = (await rawPeer.ask(p.endpoint, encodeRequest([[3, 'echo', 1, 1000, null, 1, null, 'from a newer client']]))).msg
    expect(ok.replies[0].status).to.equal(Status.OK)
  })

  it('a chain runs in order around the handler on both sides, for requests and streams; after next() the client knows the peer and the attempts', async () => {
    const plog = []
    const p = await h.peer({ handlers })
    p.use(tag(plog, 'p1')).use(tag(plog, 'p2'))
    const clog = []
    const c = h.client({ seeds: [p.endpoint] })
    c.use(tag(clog, 'c1')).use(async (ctx, next) => { clog.push('c2'); const r = await next(); clog.push(`c2 after ${ctx.peer === p.endpoint} ${ctx.attempts}`); return r })
    await c.request('echo', 1)
    expect(plog).to.deep.equal(['p1 request', 'p2 request', 'p2 after', 'p1 after'])
    expect(clog).to.deep.equal(['c1 request', 'c2', 'c2 after true 1', 'c1 after'])
    plog.length = 0; clog.length = 0
    await drain(c.stream('items', { n: 1 }))
    expect(plog).to.deep.equal(['p1 stream', 'p2 stream', 'p2 after', 'p1 after'])
    expect(clog.slice(0, 2)).to.deep.equal(['c1 stream', 'c2'])
  })

  it('a client middleware runs once for a call retried on another peer; ctx.peer is the one that answered', async () => {
    let runs = 0
    let gone = null
    const a = await h.peer({ handlers: { slow: async (args, ctx) => { await new Promise((resolve) => setTimeout(resolve, 3000)); return 'a' } } })
    const b = await h.peer({ handlers: { slow: () => 'b' } })
    const c = h.client({ seeds: [a.endpoint, b.endpoint], strategy: 'round-robin', attemptTimeout: 100 })
    await c.waitFor('slow')
    await eventually(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(2))
    c.use(async (ctx, next) => { runs++; const r = await next(); gone = { peer: ctx.peer, attempts: ctx.attempts }; return r })
    const results = []
    for (let i = 0; i < 4; i++) results.push(await c.request('slow', null, { idempotent: true, timeout: 2000 }))
    expect(results).to.deep.equal(['b', 'b', 'b', 'b'])
    expect(runs).to.equal(4)
    expect(c.stats().retries).to.be.at.least(1) // some went to a first, timed out and went to b
    expect(gone.peer).to.equal(b.endpoint)
  })

  it('what a client middleware changes is what is sent: method, args, headers, timeout', async () => {
    const p = await h.peer({ handlers: { ...handlers, other: (args, ctx) => ({ other: args, left: ctx.timeoutMs }) } })
    const c = h.client({ seeds: [p.endpoint] })
    c.use((ctx, next) => { ctx.method = 'other'; ctx.args = { changed: ctx.args }; ctx.headers.tenant = 't'; ctx.timeout = 777; return next() })
    const r = await c.request('echo', 5)
    expect(r.other).to.deep.equal({ changed: 5 })
    expect(r.left).to.be.at.most(777).and.above(500)
  })

  it('errors from each position: a client middleware before or after next(), a peer middleware before or after next() (coded, not retryable), next() twice; a middleware may answer itself', async () => {
    let ran = 0
    const p = await h.peer({ handlers: { ...handlers, count: () => ++ran } })
    const c = h.client({ seeds: [p.endpoint] })
    const before = Object.assign(new Error('client before'), { code: 'E_CB' })
    const c1 = h.client({ seeds: [p.endpoint] }).use(() => { throw before })
    expect(await c1.request('count').catch((e) => e)).to.equal(before)
    expect(ran).to.equal(0)
    const c2 = h.client({ seeds: [p.endpoint] }).use(async (ctx, next) => { await next(); throw new Error('client after') })
    expect((await c2.request('count').catch((e) => e)).message).to.equal('client after')
    expect(ran).to.equal(1)
    const twice = h.client({ seeds: [p.endpoint] }).use(async (ctx, next) => { await next(); return next() })
    expect(await twice.request('count').catch((e) => e)).to.be.instanceOf(ZeromeshError).and.have.property('message').that.includes('next() more than once')
    const cached = h.client({ seeds: [p.endpoint] }).use(() => 'from the cache')
    expect(await cached.request('count')).to.equal('from the cache')
    expect(ran).to.equal(2)

    const mode = { at: null }
    p.use(async (ctx, next) => {
      if (mode.at === 'before') throw Object.assign(new Error('peer before'), { code: 'E_PB' })
      if (mode.at === 'string') throw 'a string' // eslint-disable-line no-throw-literal
      const r = await next()
      if (mode.at === 'after') throw Object.assign(new Error('peer after'), { code: 'E_PA' })
      return r
    })
    mode.at = 'before'
    let err = await rejectsWith(c.request('count', null, { idempotent: true }), 'ERR_ZEROMESH_REMOTE')
    expect([err.remoteCode, err.message, err.retryable]).to.deep.equal(['E_PB', 'peer before', false])
    expect(ran).to.equal(2)
    mode.at = 'after'
    err = await rejectsWith(c.request('count'), 'ERR_ZEROMESH_REMOTE')
    expect(err.remoteCode).to.equal('E_PA')
    expect(ran).to.equal(3)
    mode.at = 'string'
    err = await rejectsWith(c.request('count'), 'ERR_ZEROMESH_REMOTE')
    expect([err.remoteCode, err.message]).to.deep.equal([null, 'a string'])
    expect(c.stats().retries).to.equal(0)
  })

  it('streams: a peer middleware\'s error ends the stream with its code before any item; one that answers without next() ends it empty; args it changes reach the handler', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    let mode = null
    p.use(async (ctx, next) => {
      if (mode === 'refuse') throw Object.assign(new Error('no streams for you'), { code: 'E_NO' })
      if (mode === 'skip') return undefined
      if (mode === 'args') ctx.args = { n: 3 }
      return next()
    })
    mode = 'refuse'
    let err = null
    try { await drain(c.stream('items', { n: 5 })) } catch (e) { err = e }
    expect(err).to.be.instanceOf(RemoteError)
    expect([err.remoteCode, err.items]).to.deep.equal(['E_NO', 0])
    mode = 'skip'
    expect(await drain(c.stream('items', { n: 5 }))).to.deep.equal([])
    mode = 'args'
    expect((await drain(c.stream('items', { n: 1 }))).map((x) => x.i)).to.deep.equal([0, 1, 2])
    // A client middleware's error comes out of the iteration.
    const c2 = h.client({ seeds: [p.endpoint] }).use(() => { throw Object.assign(new Error('client says no'), { code: 'E_C' }) })
    mode = null
    err = null
    try { await drain(c2.stream('items')) } catch (e) { err = e }
    expect(err.code).to.equal('E_C')
  })
})
