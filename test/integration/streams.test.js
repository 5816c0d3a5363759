// Streams end to end over real ZeroMQ sockets (issue 26): handlers that yield, clients that
// iterate, request streams, flow control, ends and cancellation, failures, worker threads.
import { Readable } from 'node:stream'
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
  async * values (a) { for (const v of a) yield v },
  plain: (a) => a * 2,
  readable: (a) => Readable.from(Array.from({ length: a.n }, (_, i) => `line ${i}`)),
  async * boom (a) {
    for (let i = 0; i < a.n; i++) yield i
    throw Object.assign(new Error('broke mid-stream'), { code: 'E_MID' })
  },
  async * sum (a, ctx) {
    let t = 0
    for await (const x of ctx.input) t += x
    yield t
  },
  async * double (a, ctx) {
    for await (const x of ctx.input) yield x * 2
  },
  async * firstOf (a, ctx) {
    for await (const x of ctx.input) { yield x; break }
    yield 'left'
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

  it('a generator handler streams its items in order, values of every kind; Readable.from takes the stream', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    expect((await collect(c.stream('rows', { n: 3000 }))).map((r) => r.i)).to.deep.equal(Array.from({ length: 3000 }, (_, i) => i))
    const values = [null, true, -1.5, 2 ** 53 - 1, 'ü€😀', [1, [2]], { a: { b: 'x' } }, Buffer.from([1, 2, 3]), new Date(86400000), new Uint8Array([9, 8])]
    const got = await collect(c.stream('values', values))
    expect(got.slice(0, 7)).to.deep.equal(values.slice(0, 7))
    expect(Buffer.from(got[7]).equals(values[7])).to.equal(true)
    expect(got[8].getTime()).to.equal(86400000)
    expect([...got[9]]).to.deep.equal([9, 8])
    const lines = await collect(Readable.from(c.stream('readable', { n: 5 })))
    expect(lines).to.deep.equal(['line 0', 'line 1', 'line 2', 'line 3', 'line 4'])
    const s = c.stream('rows', { n: 10 })
    await collect(s)
    expect(s.received).to.equal(10)
    expect(p.stats().streams).to.include({ opened: 4, ended: 4, open: 0 })
    expect(p.stats().inflight).to.equal(0)
  })

  it('a stream of a plain handler is its one result; a plain request of a streaming handler is ERR_ZEROMESH_STREAM_ONLY and ends the generator', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    expect(await collect(c.stream('plain', 21))).to.deep.equal([42])
    const err = await c.request('rows', { n: 5 }).catch((e) => e)
    expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'ERR_ZEROMESH_STREAM_ONLY' })
    expect(err.message).to.match(/client\.stream\(\)/)
    expect(log.produced).to.equal(0)
  })

  it('request streams: the handler reads the client\'s items from ctx.input; both ways at once', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    expect(await collect(c.stream('sum', null, { input: [1, 2, 3, 4] }))).to.deep.equal([10])
    async function * slowly () { for (let i = 0; i < 300; i++) { if (i % 50 === 0) await delay(5); yield i } }
    expect(await collect(c.stream('double', null, { input: slowly() }))).to.deep.equal(Array.from({ length: 300 }, (_, i) => i * 2))
    expect(await collect(c.stream('sum', null, { input: [] }))).to.deep.equal([0])
    // A handler that stops reading its input early: what the client still sends is dropped, the stream ends well, the client's source is closed.
    let closed = 0
    async function * endless () { try { for (let i = 0; ; i++) { await delay(1); yield i } } finally { closed++ } }
    expect(await collect(c.stream('firstOf', null, { input: endless() }))).to.deep.equal([0, 'left'])
    await eventually(() => expect(closed).to.equal(1))
    expect(p.stats().streams.violations).to.equal(0)
  })

  it('flow control: a reader that stops holds the handler to its window; it goes on as the reader reads', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint], streamWindow: { items: 8, bytes: 1 << 20 } })
    const it = c.stream('rows', { n: 1000 })[Symbol.asyncIterator]()
    expect((await it.next()).value).to.deep.equal({ i: 0 })
    // The handler made the window and waits for credit: at most the window (8) and what the
    // generator made before it noticed (one item ahead).
    await eventually(() => expect(p.stats().streams.awaitingCredit).to.equal(1))
    expect(log.produced).to.be.within(8, 10)
    let n = 1
    while (!(await it.next()).done) n++
    expect(n).to.equal(1000)
    // Bytes too: 1 MiB items against a window of 2 MiB.
    const big = h.client({ seeds: [p.endpoint], streamWindow: { items: 64, bytes: 2 << 20 } })
    const it2 = big.stream('rows', { n: 100, size: 1000000 })[Symbol.asyncIterator]()
    await it2.next()
    await eventually(() => expect(p.stats().streams.awaitingCredit).to.equal(1))
    expect(log.produced).to.be.within(2, 5)
    await it2.return()
  })

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

  it('a reader that breaks out ends the generator on the peer (finally runs, ctx.signal aborts) within a round trip', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    let n = 0
    for await (const r of c.stream('rows', { n: 1e9, ms: 1 })) if (++n === 5 && r.i === 4) break
    const t0 = Date.now()
    await eventually(() => expect(log.finally).to.equal(1), { timeout: 2000 })
    expect(Date.now() - t0).to.be.below(200)
    expect(log.aborted).to.equal(1)
    expect(p.stats().streams).to.include({ cancelled: 1, open: 0 })
    expect(p.stats().inflight).to.equal(0)
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

  it('an aborted signal ends the stream with ERR_ZEROMESH_ABORTED and `items`, and the generator on the peer', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const ac = new AbortController()
    const got = []
    const s = c.stream('rows', { n: 1e9, ms: 2 }, { signal: ac.signal })
    setTimeout(() => ac.abort(), 100)
    const err = await failure(s, got)
    expect(err.code).to.equal('ERR_ZEROMESH_ABORTED')
    expect(err.items).to.equal(got.length).and.be.greaterThan(0)
    await eventually(() => expect(log.aborted).to.equal(1), { timeout: 1000 })
  })

  it('an error thrown mid-stream arrives after the items before it, with its code and the count', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const got = []
    const err = await failure(c.stream('boom', { n: 7 }), got)
    expect(got).to.deep.equal([0, 1, 2, 3, 4, 5, 6])
    expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'E_MID', items: 7, message: 'broke mid-stream' })
  })

  it('a deadline for the whole stream and an idle timeout between items; a slow reader is not idle', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    let err = await failure(c.stream('rows', { n: 1e9, ms: 20 }, { timeout: 300 }))
    expect(err.code).to.equal('ERR_ZEROMESH_TIMEOUT')
    expect(err.items).to.be.within(3, 20)
    err = await failure(c.stream('never', null, { idleTimeout: 200 }))
    expect(err).to.include({ code: 'ERR_ZEROMESH_TIMEOUT', items: 0 })
    await eventually(() => expect(p.stats().streams.open).to.equal(0), { timeout: 1000 })
    // A reader slower than idleTimeout is behind, not idle: nothing fails.
    const s = c.stream('rows', { n: 4 }, { idleTimeout: 100 })
    let n = 0
    for await (const r of s) { n++; if (r.i < 2) await delay(250) }
    expect(n).to.equal(4)
  })

  it('before its first item a stream fails over: a busy peer, a peer that does not serve it', async () => {
    const a = await h.peer({ handlers, maxStreams: 0 })
    const b = await h.peer({ handlers, seeds: [a.endpoint] })
    const d = await h.peer({ handlers: { other: () => 1 }, seeds: [a.endpoint] })
    const c = h.client({ seeds: [a.endpoint, b.endpoint, d.endpoint] })
    await c.waitFor('rows')
    await eventually(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(3))
    for (let i = 0; i < 10; i++) expect(await collect(c.stream('rows', { n: 3 }))).to.have.length(3)
    expect(b.stats().streams.ended).to.equal(10)
    expect(a.stats().streams.refused).to.be.greaterThan(0)
    expect(d.stats().streams?.opened ?? 0).to.equal(0) // it does not serve rows: never asked
    // Every peer refuses busy: the stream waits for a place until its deadline, then the error says why.
    const only = h.client({ seeds: [a.endpoint], discover: false })
    const t0 = Date.now()
    const err = await failure(only.stream('rows', { n: 3 }, { timeout: 600 }))
    expect(err.code).to.equal('ERR_ZEROMESH_BUSY')
    expect(err.message).to.match(/maxStreams 0/)
    expect(Date.now() - t0).to.be.within(550, 3000)
    expect(only.stats().waited).to.equal(1)
  })

  it('a stream refused busy before its first item waits for a place, as a request does, and runs when one frees', async () => {
    const p = await h.peer({ handlers, maxInflight: 1 })
    const c = h.client({ seeds: [p.endpoint], discover: false })
    await c.waitFor('rows')
    const hold = collect(c.stream('rows', { n: 3, ms: 100 })) // takes the one place for about 300 ms
    await eventually(() => expect(p.stats().inflight).to.equal(1))
    const waiting = collect(c.stream('rows', { n: 2 }, { timeout: 5000 }))
    await eventually(() => expect(c.stats().waiting).to.equal(1))
    expect(await hold).to.have.length(3)
    expect(await waiting).to.deep.equal([{ i: 0 }, { i: 1 }])
    expect(c.stats().waited).to.equal(1)
    expect(p.stats().busy).to.be.at.most(7) // the first refusal and probes 10, 20, 40 ... ms apart (no request of ours ran there)
  })

  it('streams count toward maxInflight, and ends give the places back', async () => {
    const p = await h.peer({ handlers, maxInflight: 2 })
    const c = h.client({ seeds: [p.endpoint], discover: false })
    const s1 = c.stream('never')[Symbol.asyncIterator]()
    const s2 = c.stream('never')[Symbol.asyncIterator]()
    s1.next().catch(() => {}); s2.next().catch(() => {})
    await eventually(() => expect(p.stats().inflight).to.equal(2))
    const err = await c.request('plain', 1, { timeout: 300 }).catch((e) => e)
    expect(err.code).to.equal('ERR_ZEROMESH_BUSY') // no place before its deadline
    const waiting = c.request('plain', 1, { timeout: 5000 })
    await eventually(() => expect(c.stats().waiting).to.equal(1))
    await s1.return(); await s2.return() // the places come back: the waiting request gets one
    expect(await waiting).to.equal(2)
    await eventually(() => expect(p.stats().inflight).to.equal(0))
    expect(await c.request('plain', 1)).to.equal(2)
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
