// Streams over real ZeroMQ sockets (issue 26), what the behaviour suite does not run in both
// worlds (test/behaviour/streams.test.js: items, values, request streams, flow control, ends,
// cancellation, failures, deadlines, failover, places): a window larger than the pipes hold,
// no timer left behind, a draining peer's streams, worker threads, an older peer, raw bad
// input, a silent client's stream ended by the peer.
import { expect } from 'chai'
import zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually, delay } from '../helpers/eventually.js'
import { encodeStreamOpen, encodeStreamItems, encodeStreamCredit, encodeStreamEnd, decode, encodeError, MessageType, Status, ProtocolErrorCode } from '../../protocol/index.js'
import { encodeCancel, encodePing } from '../../protocol/codec.js'

const log = { produced: 0, finally: 0, aborted: 0 }
const handlers = {
  async * rows (a, ctx) {
    try {
      for (let i = a.from ?? 0; i < a.n; i++) {
        log.produced = i + 1
        if (a.ms) await delay(a.ms)
        else if (a.every && i % a.every === 0) await new Promise(setImmediate)
        yield a.size ? { i, pad: Buffer.alloc(a.size, i & 0xff) } : { i }
      }
    } finally {
      log.finally++
      if (ctx.signal.aborted) log.aborted++
    }
  },
  async * sum (a, ctx) {
    let t = 0
    for await (const x of ctx.input) t += x
    yield t
  },
  async * never (a, ctx) {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
  },
}

async function collect (stream) {
  const out = []
  for await (const x of stream) out.push(x)
  return out
}

async function failure (stream, keep = []) {
  try {
    for await (const x of stream) keep.push(x)
  } catch (err) {
    return err
  }
  throw new Error(`the stream ended without an error after ${keep.length} items`)
}

describe('streams', function () {
  this.timeout(20000)
  const h = harness()
  beforeEach(() => { log.produced = log.finally = log.aborted = 0 })
  afterEach(() => h.cleanup())

  it('a window larger than the pipes hold: every item arrives, in order, once (a full pipe holds frames back, never drops or reorders them)', async () => {
    // 64 MiB of credit is far more than ZeroMQ's queues and the kernel's buffers take at once:
    // the producer outruns the connection, and frames meet a full pipe (EAGAIN).
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint], streamWindow: { items: 1024, bytes: 64 << 20 } })
    const seen = []
    for await (const r of c.stream('rows', { n: 400, size: 500000 })) seen.push(r.i)
    expect(seen).to.deep.equal(Array.from({ length: 400 }, (_, i) => i))
    // Many small frames too (one item a frame, the generator pausing between items), three streams at once on one connection.
    const many = await Promise.all([0, 1, 2].map(() => collect(c.stream('rows', { n: 3000, size: 2000, every: 1 }))))
    for (const got of many) expect(got.map((r) => r.i)).to.deep.equal(Array.from({ length: 3000 }, (_, i) => i))
    expect(p.stats().drops).to.deep.equal({})
  })

  it('a stream stopped from outside its handler (its reader broke out) leaves no timer behind: its ctx.signal\'s deadline timer goes with it (one of 60 s kept a process alive a minute)', async () => {
    // The peer's clock, recording the long timers it is asked for and those cleared.
    const pending = new Set()
    const clock = {
      now: () => performance.now(),
      setTimeout: (fn, ms) => { const t = setTimeout(() => { pending.delete(t); fn() }, ms); if (ms >= 30000) pending.add(t); return t },
      clearTimeout: (t) => { pending.delete(t); clearTimeout(t) },
    }
    let watched = 0
    const watch = async function * (a, ctx) { // reads its signal as it runs, as the demo's count does
      const signal = ctx.signal
      try {
        for (let i = 0; !signal.aborted; i++) { await delay(1); yield i }
      } finally {
        watched++
      }
    }
    const p = await h.peer({ handlers: { watch }, clock })
    const c = h.client({ seeds: [p.endpoint] })
    let n = 0
    for await (const i of c.stream('watch', null, { timeout: 60000 })) if (++n === 3 && i === 2) break
    await eventually(() => expect(p.stats().streams).to.include({ cancelled: 1, open: 0 }), { timeout: 2000 })
    await eventually(() => expect(watched, 'its handler ended').to.equal(1))
    expect(pending.size, 'long timers still set').to.equal(0)
  })

  it('a draining peer lets a stream finish within its drain timeout; past it, the stream ends DRAINING (retryable) with its count', async () => {
    const p = await h.peer({ handlers, drainTimeout: 2000 })
    const c = h.client({ seeds: [p.endpoint], discover: false })
    const s = c.stream('rows', { n: 20, ms: 10 })
    const first = await s.next()
    const stopping = p.stop()
    const rest = await collect(s)
    expect([first.value, ...rest]).to.have.length(20)
    await stopping
    const q = await h.peer({ handlers, drainTimeout: 200 })
    const c2 = h.client({ seeds: [q.endpoint], discover: false })
    const got = []
    const s2 = c2.stream('rows', { n: 1e9, ms: 10 })
    got.push((await s2.next()).value)
    const stopped = q.stop()
    const err = await failure(s2, got)
    await stopped
    expect(err).to.include({ code: 'ERR_ZEROMESH_DRAINING', retryable: true, items: got.length })
    expect(q.stats().streams.drained).to.equal(1)
    await eventually(() => expect(log.finally).to.equal(2))
  })

  it('a handler module in threads streams from its thread under the same credit, and a stream waiting for credit holds no thread', async () => {
    const mod = 'data:text/javascript,' + encodeURIComponent(`
      export async function * rows (a) { for (let i = 0; i < a.n; i++) { globalThis.made = i + 1; yield { i, pad: a.size ? new Uint8Array(a.size) : null } } }
      export function made () { return globalThis.made ?? 0 }
      export async function * boom () { yield 1; throw Object.assign(new Error('thread broke'), { code: 'E_T' }) }
      export function echo (a) { return a }
      export async function * who (a, ctx) { yield ctx.method; yield ctx.timeoutMs }
      export async function * double (a, ctx) { for await (const x of ctx.input) yield x * 2 }
      export async function * kinds (a, ctx) { for await (const x of ctx.input) yield x?.constructor?.name ?? String(x) }
      export async function * firstOf (a, ctx) { for await (const x of ctx.input) { yield x; break } yield 'left' }`)
    const p = await h.peer({ handlers: mod, threads: 1 })
    const c = h.client({ seeds: [p.endpoint], streamWindow: { items: 4, bytes: 1 << 20 } })
    expect((await collect(c.stream('rows', { n: 500 }))).map((r) => r.i)).to.deep.equal(Array.from({ length: 500 }, (_, i) => i))
    const it = c.stream('rows', { n: 1e6 })[Symbol.asyncIterator]()
    await it.next()
    await eventually(() => expect(p.stats().streams.awaitingCredit).to.equal(1))
    // The one thread is free for requests while the stream waits for credit...
    for (let i = 0; i < 20; i++) expect(await c.request('echo', i)).to.equal(i)
    // ...and the generator stopped at the window.
    expect(await c.request('made')).to.be.at.most(6)
    await it.return()
    const got = []
    const err = await failure(c.stream('boom'), got)
    expect(got).to.deep.equal([1])
    expect(err).to.include({ remoteCode: 'E_T', items: 1 })
    expect((await c.request('rows', { n: 1 }).catch((e) => e)).remoteCode).to.equal('ERR_ZEROMESH_STREAM_ONLY')
    expect(await collect(c.stream('who', null, { timeout: 4000 }))).to.deep.equal(['who', 4000]) // its ctx names the method, as on the main thread
    // Request streams too: ctx.input in the thread, the values a main-thread handler sees, paced by the client's credit.
    async function * slowly () { for (let i = 0; i < 400; i++) { if (i % 100 === 0) await delay(5); yield i } }
    expect(await collect(c.stream('double', null, { input: slowly() }))).to.deep.equal(Array.from({ length: 400 }, (_, i) => i * 2))
    expect(await collect(c.stream('kinds', null, { input: [Buffer.from('x'), new Date(5), { a: 1 }, null] }))).to.deep.equal(['Buffer', 'Date', 'Object', 'null'])
    expect(await collect(c.stream('firstOf', null, { input: slowly() }))).to.deep.equal([0, 'left']) // a handler that stops reading its input ends fine
    await eventually(() => expect(p.stats().inflight).to.equal(0))
  })

  it('a peer that takes no streams (older) is never opened a stream on; the error says so', async () => {
    // A hand-written older peer: answers SERVICE_GET with ERROR "unknown type", as one that predates services and streams does.
    // One bind on an ephemeral port (binding a port just closed again can fail: EADDRINUSE).
    const old = new zmq.Router({ linger: 0 })
    await old.bind('tcp://127.0.0.1:0')
    const endpoint = old.lastEndpoint
    let opens = 0
    ;(async () => {
      for await (const [id, frame] of old) {
        let msg
        try { msg = decode(frame) } catch { continue }
        if (msg.type === MessageType.STREAM_OPEN) opens++
        if (msg.type === MessageType.PING) continue
        await old.send([id, encodeError(ProtocolErrorCode.UNKNOWN_TYPE, 'unknown message type')]).catch(() => {})
      }
    })().catch(() => {})
    try {
      const c = h.client({ seeds: [endpoint], discover: false })
      const err = await failure(c.stream('rows', { n: 1 }, { idleTimeout: 3000 }))
      expect(err.code).to.equal('ERR_ZEROMESH_NO_PEERS')
      expect(err.message).to.match(/take no streams/)
      expect(opens).to.equal(0)
    } finally {
      old.close()
    }
  })

  it('bad input is dropped and counted, never a crash: strays, a reused id, items beyond credit, empty item frames', async () => {
    const p = await h.peer({ handlers })
    const raw = new zmq.Dealer({ linger: 0 })
    raw.connect(p.endpoint)
    const answers = []
    ;(async () => { for await (const [f] of raw) answers.push(decode(f)) })().catch(() => {})
    await raw.send(encodeStreamItems(99, [1]))
    await raw.send(encodeStreamCredit(99, 5, 5))
    await raw.send(encodeStreamEnd(99, Status.OK, null, 0))
    await raw.send(Buffer.from('a75a4d011392059' + '0', 'hex')) // no items: malformed
    await raw.send(encodeStreamOpen(7, 'never', null, 0, 1, 1000, false))
    await raw.send(encodeStreamOpen(7, 'rows', { n: 5 }, 0, 1, 1000, false)) // id 7 is open
    await raw.send(encodeStreamOpen(8, 'sum', null, 0, 1, 1000, true)) // a request stream: the peer grants 32 items
    await eventually(() => expect(answers.some((m) => m.type === MessageType.STREAM_CREDIT && m.id === 8)).to.equal(true))
    const grant = answers.find((m) => m.type === MessageType.STREAM_CREDIT && m.id === 8)
    await raw.send(encodeStreamItems(8, Array.from({ length: grant.items + 1 }, () => 1))) // one more than the credit
    await eventually(() => expect(answers.some((m) => m.type === MessageType.STREAM_END && m.id === 8)).to.equal(true))
    const end = answers.find((m) => m.type === MessageType.STREAM_END && m.id === 8)
    expect(end.status).to.equal(Status.INVALID_REQUEST)
    expect(end.message).to.match(/credit/)
    const st = p.stats()
    expect(st.streams).to.include({ stray: 3, reused: 1, violations: 1 })
    expect(st.malformed).to.be.at.least(1)
    // Streams of a connection's own ids only: another connection cannot cancel or feed them.
    const other = new zmq.Dealer({ linger: 0 })
    other.connect(p.endpoint)
    await other.send(encodeCancel([7]))
    await other.send(encodePing(1)) // answered after the CANCEL was handled: a connection's frames are taken in order
    expect(decode((await other.receive())[0]).type).to.equal(MessageType.PONG)
    expect(p.stats().streams.open).to.equal(1)
    await raw.send(encodeCancel([7]))
    await eventually(() => expect(p.stats().streams.open).to.equal(0))
    raw.close(); other.close()
    const c = h.client({ seeds: [p.endpoint] })
    expect(await collect(c.stream('rows', { n: 3 }))).to.have.length(3)
  })

  it('a peer ends a stream waiting for credit whose client went silent (streamIdleTimeout), and its generator', async () => {
    const p = await h.peer({ handlers, streamIdleTimeout: 300 })
    const raw = new zmq.Dealer({ linger: 0 })
    raw.connect(p.endpoint)
    await raw.send(encodeStreamOpen(1, 'rows', { n: 1e9 }, 0, 2, 1 << 20, false))
    await eventually(() => expect(p.stats().streams.open).to.equal(1))
    await eventually(() => expect(p.stats().streams).to.include({ silent: 1, open: 0 }), { timeout: 3000 })
    expect(log.finally).to.equal(1)
    raw.close()
  })
})
