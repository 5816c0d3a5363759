// A stream cut by its deadline ends truthfully (issue 49, item 1; PROTOCOL.md 4.10): from a
// raw connection that speaks the protocol itself (as a client in another language would, with
// no timer of its own), a STREAM_OPEN with timeoutMs gets STREAM_END REMOTE with code
// ERR_ZEROMESH_EXPIRED and the count of items sent, whatever the stream was doing when its
// deadline passed: producing, waiting for credit, or waiting for its handler's first item.
// Never an OK end (which reads as a whole stream), never nothing. And the zeromesh client
// reports it as ERR_ZEROMESH_TIMEOUT with `items`. And ids, which streams share with requests
// (issue 49, item 2): one in use by the other kind is refused INVALID_REQUEST, never run.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { setImmediate as tick } from 'node:timers/promises'
import { harness } from '../helpers/cluster.js'
import { onClock } from '../helpers/virtual-time.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { decode, MessageType, Status, encodeRequest } from '../../protocol/index.js'
import { encodeStreamOpen } from '../../protocol/stream-codec.js'

const handlers = {
  // Produces until its signal aborts, as a well-behaved generator does (it then returns: the
  // end that used to go out OK with the count so far).
  async * produce (args, ctx) {
    for (let i = 0; ; i++) {
      if (ctx.signal.aborted) return
      yield { i }
      await tick()
    }
  },
  // Takes its time before the first item, and does not look at its signal.
  async * slowStart (args) {
    await new Promise((resolve) => setTimeout(resolve, args.ms))
    yield { i: 0 }
  },
}

describe('a stream cut by its deadline (raw connection)', function () {
  this.timeout(30000)
  const h = harness()
  const raws = []
  afterEach(async () => {
    for (const s of raws.splice(0)) s.close()
    await h.cleanup()
  })

  /**
   * Opens `method` on a raw Dealer with `timeoutMs` and a window of `items`; resolves with the
   * items counted and the end, or null after 3 s, and `after`, the ms it took by `clock` (the
   * peer's: a virtual one is moved along meanwhile, so its deadline costs no real wait).
   */
  async function rawStream (endpoint, method, args, timeoutMs, items, clock = null) {
    const raw = new zmq.Dealer({ linger: 0, sendTimeout: 1000, receiveTimeout: 3000 })
    raws.push(raw)
    raw.connect(endpoint)
    const now = () => clock === null ? Date.now() : clock.now()
    const t0 = now()
    await raw.send(encodeStreamOpen(7, method, args, timeoutMs, items, 64 * 1024 * 1024, false))
    const reading = (async () => {
      let received = 0
      for (;;) {
        let frames
        try { frames = await raw.receive() } catch { return { received, end: null, after: now() - t0 } }
        const msg = decode(frames[0], undefined, frames.slice(1))
        if (msg.type === MessageType.STREAM_ITEM) received += msg.items.length
        if (msg.type === MessageType.STREAM_END) return { received, end: msg, after: now() - t0 }
      }
    })()
    return clock === null ? reading : onClock(clock, reading, { step: 20 })
  }

  const states = [
    ['producing', 'produce', {}, 1000],
    ['waiting for credit', 'produce', {}, 3],
    ['waiting for its handler\'s first item', 'slowStart', { ms: 5000 }, 1000],
  ]
  for (const [state, method, args, window] of states) {
    it(`${state}: STREAM_END REMOTE ERR_ZEROMESH_EXPIRED with the count, every time`, async () => {
      // The peer's time is a virtual clock over its real sockets: its deadline is moved to, not waited for.
      const clock = new VirtualClock(performance.now())
      const p = await onClock(clock, h.peer({ handlers, clock }))
      for (let run = 0; run < 4; run++) {
        const { received, end, after } = await rawStream(p.endpoint, method, args, 300, window, clock)
        expect(end, `run ${run}: an end came`).to.not.equal(null)
        expect(end.status, `run ${run}: not OK`).to.equal(Status.REMOTE)
        expect(end.code).to.equal('ERR_ZEROMESH_EXPIRED')
        expect(end.count).to.equal(received)
        expect(after).to.be.within(250, 2000)
        if (state === 'waiting for credit') expect(received).to.equal(3)
        if (state.startsWith('waiting for its')) expect(received).to.equal(0)
      }
      await onClock(clock, p.stop())
    })
  }

  it('a handler in a worker thread, producing and then waiting for credit: the same end', async () => {
    const p = await h.peer({ handlers: new URL('../fixtures/work.js', import.meta.url), threads: 1 })
    for (const window of [1000, 3]) {
      for (let run = 0; run < 2; run++) {
        const { received, end } = await rawStream(p.endpoint, 'chunks', { n: 1e6, size: 10 }, 300, window)
        expect(end, `window ${window}, run ${run}: an end came`).to.not.equal(null)
        expect(end.status).to.equal(Status.REMOTE)
        expect(end.code).to.equal('ERR_ZEROMESH_EXPIRED')
        expect(end.count).to.equal(received)
      }
    }
  })

  it('the zeromesh client reports it as ERR_ZEROMESH_TIMEOUT with the items that came', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    await c.waitFor('produce')
    let n = 0
    let err = null
    try {
      for await (const x of c.stream('produce', {}, { timeout: 300 })) n += x === undefined ? 0 : 1
    } catch (e) { err = e }
    expect(err?.code).to.equal('ERR_ZEROMESH_TIMEOUT')
    expect(err.items).to.equal(n)
  })

  it('ids are shared: a STREAM_OPEN reusing a request\'s id, running or finished, is refused INVALID_REQUEST and not run; a REQUEST reusing an open stream\'s id is refused INVALID_REQUEST and not run', async () => {
    let ran = 0
    const p = await h.peer({ handlers: { ...handlers, echo: (a) => { ran++; return a }, async * once () { ran++; yield 1 } } })
    const raw = new zmq.Dealer({ linger: 0, sendTimeout: 1000, receiveTimeout: 3000 })
    raws.push(raw)
    raw.connect(p.endpoint)
    const next = async () => { const f = await raw.receive(); return decode(f[0], undefined, f.slice(1)) }
    // A request answered: its id is remembered (for duplicates).
    await raw.send(encodeRequest([[41, 'echo', 'hi', 1000]]))
    const reply = await next()
    expect(reply.replies[0]).to.include({ id: 41, status: Status.OK })
    // A stream opened under that id: refused, the handler not run.
    await raw.send(encodeStreamOpen(41, 'once', null, 1000, 10, 1e6, false))
    const refused = await next()
    expect(refused).to.include({ type: MessageType.STREAM_END, id: 41, status: Status.INVALID_REQUEST, count: 0 })
    expect(refused.message).to.match(/shared/)
    expect(ran).to.equal(1)
    // A stream open (waiting for credit), then a request under its id: refused, not run.
    await raw.send(encodeStreamOpen(42, 'produce', {}, 5000, 1, 1e6, false))
    const item = await next()
    expect(item).to.include({ type: MessageType.STREAM_ITEM, id: 42 })
    await raw.send(encodeRequest([[42, 'echo', 'again', 1000]]))
    const second = await next()
    expect(second.replies[0]).to.include({ id: 42, status: Status.INVALID_REQUEST })
    expect(second.replies[0].message).to.match(/shared/)
    expect(ran).to.equal(1)
  })
})
