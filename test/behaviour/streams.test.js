// What a stream does, in every world (test/helpers/worlds.js): its items in order with a count;
// a handler's throw after some items, the error carrying how many arrived; the reader that stops
// early cancels the handler and frees its place; a deadline ends it EXPIRED; and in the memory
// world a peer killed before the first item: the stream opens on another peer.
import { expect } from 'chai'
import { WORLDS } from '../helpers/worlds.js'

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
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    it('items in order, as many as the handler made, past the client\'s window', async () => {
      const a = await w.peer({ handlers: { count: async function * ({ n }) { for (let i = 0; i < n; i++) yield i } } })
      const c = w.client({ seeds: [a.endpoint], streamWindow: { items: 8, bytes: 65536 } })
      const { items, err } = await readAll(w, c.stream('count', { n: 100 }))
      expect(err).to.equal(null)
      expect(items).to.deep.equal(Array.from({ length: 100 }, (_, i) => i))
      await w.until(() => expect(a.stats().streams).to.include({ ended: 1, open: 0 }))
    })

    it('a handler that throws after some items: they arrive, then its error, carrying how many', async () => {
      const a = await w.peer({ handlers: { flaky: async function * () { yield 1; yield 2; throw Object.assign(new Error('broke'), { code: 'E_BROKE' }) } } })
      const c = w.client({ seeds: [a.endpoint] })
      const { items, err } = await readAll(w, c.stream('flaky', null))
      expect(items).to.deep.equal([1, 2])
      expect([err.code, err.remoteCode, err.items]).to.deep.equal(['ERR_ZEROMESH_REMOTE', 'E_BROKE', 2])
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
