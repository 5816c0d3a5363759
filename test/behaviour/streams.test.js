// What a stream does, in every world (test/helpers/worlds.js): its items in order with a count,
// values of every kind; a plain handler's one result, a plain request of a streaming handler
// refused; request streams (ctx.input); flow control; a handler's throw after some items, the
// error carrying how many arrived; the reader that stops early cancels the handler and frees
// its place; an abort; a deadline ends it EXPIRED, an idle timeout; failover before the first
// item, a place waited for, streams counted as places; and in the memory world a peer killed
// before the first item: the stream opens on another peer. What only real sockets show (full
// pipes, threads, raw frames, an older peer, a stream ended DRAINING at the drain timeout: the
// twin's close does not give what was sent the linger ZeroMQ gives it):
// integration/streams.test.js.
import { Readable } from 'node:stream'
import { expect } from 'chai'
import { WORLDS } from '../helpers/worlds.js'

/** The handlers of these tests, on world `w`'s time, telling `log` what they did. */
function handlersIn (w, log) {
  return {
    async * rows (a, ctx) {
      try {
        for (let i = a.from ?? 0; i < a.n; i++) {
          log.produced = i + 1
          if (a.ms) await w.after(a.ms)
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
}

/** All of `stream`'s items, in world `w`. */
function collect (w, stream) {
  return w.settle((async () => {
    const out = []
    for await (const x of stream) out.push(x)
    return out
  })())
}

/** Reads `stream` to its end in world `w`: { items, err }. */
async function readAll (w, stream) {
  const items = []
  const reading = (async () => { for await (const item of stream) items.push(item) })()
  try {
    await w.settle(reading)
    return { items, err: null }
  } catch (err) {
    return { items, err }
  }
}

for (const W of WORLDS) {
  describe(`streams (${W.name})`, function () {
    this.timeout(20000)
    let w
    let log
    let handlers
    beforeEach(() => {
      w = W.make()
      log = { produced: 0, finally: 0, aborted: 0 }
      handlers = handlersIn(w, log)
    })
    afterEach(() => w.cleanup())

    it('items in order, as many as the handler made, past the client\'s window', async () => {
      const a = await w.peer({ handlers: { count: async function * ({ n }) { for (let i = 0; i < n; i++) yield i } } })
      const c = w.client({ seeds: [a.endpoint], streamWindow: { items: 8, bytes: 65536 } })
      const { items, err } = await readAll(w, c.stream('count', { n: 100 }))
      expect(err).to.equal(null)
      expect(items).to.deep.equal(Array.from({ length: 100 }, (_, i) => i))
      await w.until(() => expect(a.stats().streams).to.include({ ended: 1, open: 0 }))
    })

    it('values of every kind; Readable.from takes the stream; the stream counts what it received; the peer counts each stream', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint] })
      expect((await collect(w, c.stream('rows', { n: 3000 }))).map((r) => r.i)).to.deep.equal(Array.from({ length: 3000 }, (_, i) => i))
      const values = [null, true, -1.5, 2 ** 53 - 1, 'ü€😀', [1, [2]], { a: { b: 'x' } }, Buffer.from([1, 2, 3]), new Date(86400000), new Uint8Array([9, 8])]
      const got = await collect(w, c.stream('values', values))
      expect(got.slice(0, 7)).to.deep.equal(values.slice(0, 7))
      expect(Buffer.from(got[7]).equals(values[7])).to.equal(true)
      expect(got[8].getTime()).to.equal(86400000)
      expect([...got[9]]).to.deep.equal([9, 8])
      const lines = await collect(w, Readable.from(c.stream('readable', { n: 5 })))
      expect(lines).to.deep.equal(['line 0', 'line 1', 'line 2', 'line 3', 'line 4'])
      const s = c.stream('rows', { n: 10 })
      await collect(w, s)
      expect(s.received).to.equal(10)
      await w.until(() => expect(p.stats().streams).to.include({ opened: 4, ended: 4, open: 0 }))
      expect(p.stats().inflight).to.equal(0)
    })

    it('a stream of a plain handler is its one result; a plain request of a streaming handler is ERR_ZEROMESH_STREAM_ONLY and never runs the generator', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint] })
      expect(await collect(w, c.stream('plain', 21))).to.deep.equal([42])
      const err = await w.settle(c.request('rows', { n: 5 }).catch((e) => e))
      expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'ERR_ZEROMESH_STREAM_ONLY' })
      expect(err.message).to.match(/client\.stream\(\)/)
      expect(log.produced).to.equal(0)
    })

    it('request streams: the handler reads the client\'s items from ctx.input; both ways at once; a handler that stops reading closes the client\'s source', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint] })
      expect(await collect(w, c.stream('sum', null, { input: [1, 2, 3, 4] }))).to.deep.equal([10])
      async function * slowly () { for (let i = 0; i < 300; i++) { if (i % 50 === 0) await w.after(5); yield i } }
      expect(await collect(w, c.stream('double', null, { input: slowly() }))).to.deep.equal(Array.from({ length: 300 }, (_, i) => i * 2))
      expect(await collect(w, c.stream('sum', null, { input: [] }))).to.deep.equal([0])
      // What the client still sends is dropped, the stream ends well, the client's source is closed.
      let closed = 0
      async function * endless () { try { for (let i = 0; ; i++) { await w.after(1); yield i } } finally { closed++ } }
      expect(await collect(w, c.stream('firstOf', null, { input: endless() }))).to.deep.equal([0, 'left'])
      await w.until(() => expect(closed).to.equal(1))
      expect(p.stats().streams.violations).to.equal(0)
    })

    it('flow control: a reader that stops holds the handler to its window, in items and in bytes; it goes on as the reader reads', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint], streamWindow: { items: 8, bytes: 1 << 20 } })
      const it = c.stream('rows', { n: 1000 })[Symbol.asyncIterator]()
      expect((await w.settle(it.next())).value).to.deep.equal({ i: 0 })
      // The handler made the window and waits for credit: at most the window (8) and what the
      // generator made before it noticed (one item ahead).
      await w.until(() => expect(p.stats().streams.awaitingCredit).to.equal(1))
      expect(log.produced).to.be.within(8, 10)
      let n = 1
      while (!(await w.settle(it.next())).done) n++
      expect(n).to.equal(1000)
      // Bytes too: 1 MB items against a window of 2 MiB.
      const big = w.client({ seeds: [p.endpoint], streamWindow: { items: 64, bytes: 2 << 20 } })
      const it2 = big.stream('rows', { n: 100, size: 1000000 })[Symbol.asyncIterator]()
      await w.settle(it2.next())
      await w.until(() => expect(p.stats().streams.awaitingCredit).to.equal(1))
      expect(log.produced).to.be.within(2, 5)
      await w.settle(it2.return())
    })

    it('a handler that throws after some items: they arrive, then its error with its code, message and how many came', async () => {
      const a = await w.peer({ handlers: { boom: async function * ({ n }) { for (let i = 0; i < n; i++) yield i; throw Object.assign(new Error('broke mid-stream'), { code: 'E_MID' }) } } })
      const c = w.client({ seeds: [a.endpoint] })
      const { items, err } = await readAll(w, c.stream('boom', { n: 7 }))
      expect(items).to.deep.equal([0, 1, 2, 3, 4, 5, 6])
      expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'E_MID', items: 7, message: 'broke mid-stream' })
    })

    it('an aborted signal ends the stream with ERR_ZEROMESH_ABORTED and `items`, and the generator on the peer', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint] })
      const ac = new AbortController()
      w.after(100).then(() => ac.abort())
      const { items, err } = await readAll(w, c.stream('rows', { n: 1e9, ms: 2 }, { signal: ac.signal }))
      expect(err.code).to.equal('ERR_ZEROMESH_ABORTED')
      expect(err.items).to.equal(items.length).and.be.greaterThan(0)
      await w.until(() => expect(log.aborted).to.equal(1), 1000)
    })

    it('a deadline for the whole stream counts the items made in time; an idle timeout between items; a slow reader is not idle', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint] })
      let { err } = await readAll(w, c.stream('rows', { n: 1e9, ms: 20 }, { timeout: 300 }))
      expect(err.code).to.equal('ERR_ZEROMESH_TIMEOUT')
      expect(err.items).to.be.within(3, 20)
      ;({ err } = await readAll(w, c.stream('never', null, { idleTimeout: 200 })))
      expect(err).to.include({ code: 'ERR_ZEROMESH_TIMEOUT', items: 0 })
      await w.until(() => expect(p.stats().streams.open).to.equal(0), 1000)
      // A reader slower than idleTimeout is behind, not idle: nothing fails.
      const n = await w.settle((async () => {
        let k = 0
        for await (const r of c.stream('rows', { n: 4 }, { idleTimeout: 100 })) { k++; if (r.i < 2) await w.after(250) }
        return k
      })())
      expect(n).to.equal(4)
    })

    it('before its first item a stream fails over: a busy peer, a peer that does not serve it; with every peer busy it waits for a place until its deadline, and the error says why', async () => {
      const a = await w.peer({ handlers, maxStreams: 0 })
      const b = await w.peer({ handlers, seeds: [a.endpoint] })
      const d = await w.peer({ handlers: { other: () => 1 }, seeds: [a.endpoint] })
      const c = w.client({ seeds: [a.endpoint, b.endpoint, d.endpoint] })
      await w.settle(c.waitFor('rows'))
      await w.until(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(3))
      for (let i = 0; i < 10; i++) expect(await collect(w, c.stream('rows', { n: 3 }))).to.have.length(3)
      await w.until(() => expect(b.stats().streams.ended).to.equal(10))
      expect(a.stats().streams.refused).to.be.greaterThan(0)
      expect(d.stats().streams?.opened ?? 0).to.equal(0) // it does not serve rows: never asked
      const only = w.client({ seeds: [a.endpoint], discover: false })
      const t0 = w.now()
      const { err } = await readAll(w, only.stream('rows', { n: 3 }, { timeout: 600 }))
      expect(err.code).to.equal('ERR_ZEROMESH_BUSY')
      expect(err.message).to.match(/maxStreams 0/)
      expect(w.now() - t0).to.be.within(550, 3000)
      expect(only.stats().waited).to.equal(1)
    })

    it('a stream refused busy before its first item waits for a place, as a request does, and runs when one frees', async () => {
      const p = await w.peer({ handlers, maxInflight: 1 })
      const c = w.client({ seeds: [p.endpoint], discover: false })
      await w.settle(c.waitFor('rows'))
      const hold = collect(w, c.stream('rows', { n: 3, ms: 100 })) // takes the one place for about 300 ms
      await w.until(() => expect(p.stats().inflight).to.equal(1))
      const waiting = collect(w, c.stream('rows', { n: 2 }, { timeout: 5000 }))
      await w.until(() => expect(c.stats().waiting).to.equal(1))
      expect(await hold).to.have.length(3)
      expect(await waiting).to.deep.equal([{ i: 0 }, { i: 1 }])
      expect(c.stats().waited).to.equal(1)
      expect(p.stats().busy).to.be.at.most(7) // the first refusal and probes 10, 20, 40 ... ms apart (no request of ours ran there)
    })

    it('streams count toward maxInflight, and ends give the places back', async () => {
      const p = await w.peer({ handlers, maxInflight: 2 })
      const c = w.client({ seeds: [p.endpoint], discover: false })
      const s1 = c.stream('never')[Symbol.asyncIterator]()
      const s2 = c.stream('never')[Symbol.asyncIterator]()
      s1.next().catch(() => {}); s2.next().catch(() => {})
      await w.until(() => expect(p.stats().inflight).to.equal(2))
      const err = await w.settle(c.request('plain', 1, { timeout: 300 }).catch((e) => e))
      expect(err.code).to.equal('ERR_ZEROMESH_BUSY') // no place before its deadline
      const waiting = c.request('plain', 1, { timeout: 5000 })
      await w.until(() => expect(c.stats().waiting).to.equal(1))
      await w.settle(s1.return()); await w.settle(s2.return()) // the places come back: the waiting request gets one
      expect(await w.settle(waiting)).to.equal(2)
      await w.until(() => expect(p.stats().inflight).to.equal(0))
      expect(await w.settle(c.request('plain', 1))).to.equal(2)
    })

    it('a reader that stops early cancels the handler: its signal aborts, its place is free', async () => {
      let aborted = false
      const a = await w.peer({
        handlers: {
          endless: async function * (args, ctx) {
            ctx.signal.addEventListener('abort', () => { aborted = true })
            for (let i = 0; ; i++) yield i
          },
        },
      })
      const c = w.client({ seeds: [a.endpoint] })
      const got = await w.settle((async () => {
        const out = []
        for await (const item of c.stream('endless', null)) { out.push(item); if (out.length === 5) break }
        return out
      })())
      expect(got).to.deep.equal([0, 1, 2, 3, 4])
      await w.until(() => expect([aborted, a.stats().streams.open, a.stats().inflight]).to.deep.equal([true, 0, 0]))
    })

    it('a reader that breaks out ends the generator on the peer (finally runs, ctx.signal aborts) within a round trip', async () => {
      const p = await w.peer({ handlers })
      const c = w.client({ seeds: [p.endpoint] })
      await w.settle((async () => {
        let n = 0
        for await (const r of c.stream('rows', { n: 1e9, ms: 1 })) if (++n === 5 && r.i === 4) break
      })())
      const t0 = w.now()
      await w.until(() => expect(log.finally).to.equal(1), 2000)
      expect(w.now() - t0).to.be.below(200)
      expect(log.aborted).to.equal(1)
      expect(p.stats().streams).to.include({ cancelled: 1, open: 0 })
      expect(p.stats().inflight).to.equal(0)
    })

    it('a deadline: the reader gets a timeout (its own, or the peer\'s EXPIRED end) after the items made in time, and the peer ends the stream (expired, or cancelled by the client\'s timer)', async () => {
      const a = await w.peer({ handlers: { slow: async function * (args, ctx) { yield 'first'; await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)) } } })
      const c = w.client({ seeds: [a.endpoint] })
      const { items, err } = await readAll(w, c.stream('slow', null, { timeout: 300 }))
      expect(items).to.deep.equal(['first'])
      expect(err.items).to.equal(1)
      // The client's timer and the peer's are set for the same instant: whichever speaks first.
      expect(`${err.code} ${err.remoteCode ?? ''}`.trim()).to.be.oneOf(['ERR_ZEROMESH_TIMEOUT', 'ERR_ZEROMESH_REMOTE ERR_ZEROMESH_EXPIRED'])
      // The peer ends it by its own deadline (expired) or by the CANCEL the client sends when its
      // timer fires: the peer's timer starts when the request arrives, so on real sockets under
      // load the CANCEL can come first. Either way the stream is over at the peer, once.
      await w.until(() => {
        const { expired, cancelled, open } = a.stats().streams
        expect({ ended: expired + cancelled, open }).to.deep.equal({ ended: 1, open: 0 })
      })
    })

    if (W.canKill) {
      it('a peer killed before the first item: the stream opens on another peer and reads whole', async () => {
        const a = await w.peer({ handlers: { count: async function * () { await new Promise(() => {}) } } })
        const b = await w.peer({ seeds: [a.endpoint], handlers: { count: async function * ({ n }) { for (let i = 0; i < n; i++) yield i } } })
        const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: { select: (peers) => peers.find((p) => p.endpoint === a.endpoint) ?? peers[0] } })
        await w.until(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(2))
        const stream = c.stream('count', { n: 3 }, { idempotent: true })
        const reading = readAll(w, stream)
        await w.until(() => expect(a.stats().streams.open).to.equal(1))
        w.kill(a)
        const { items, err } = await reading
        expect(err).to.equal(null)
        expect(items).to.deep.equal([0, 1, 2])
      })
    }
  })
}
