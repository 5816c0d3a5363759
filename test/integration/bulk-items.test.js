// Bulk items (PROTOCOL.md 4.10): a stream's large Buffer items travel in ZeroMQ frames of their
// own after their item frame, sent as the generator yielded them, to a client whose STREAM_OPEN
// said it reads them, and copied into the item frame for one that did not; a receiver refuses
// an item message whose bulk frames do not match what it names.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import {
  decode, encodeStreamOpen, encodeStreamCredit, encodeStreamItems, MessageType, Accepts, BULK_MIN_BYTES, ProtocolError, Limits,
} from '../../protocol/index.js'
import { ItemFrameBuilder, packItem } from '../../protocol/stream-codec.js'
import { StreamProducer } from '../../protocol/stream-producer.js'

const refused = (fn) => { try { fn() } catch (err) { expect(err).to.be.instanceOf(ProtocolError); return err } throw new Error('decoded') }
const big = (fill, size = BULK_MIN_BYTES) => Buffer.alloc(size, fill)

describe('bulk items: the codec and the producer', () => {
  it('a STREAM_OPEN says whether its client reads bulk items (accepts, after the trace field)', () => {
    const read = (...extra) => decode(encodeStreamOpen(1, 'm', null, 0, 8, 1 << 20, false, ...extra))
    expect(read().bulk).to.equal(false)
    expect(read(null, Accepts.BULK).bulk).to.equal(true)
    expect(read({ traceparent: 'x' }, Accepts.BULK | 2)).to.deep.include({ bulk: true, trace: { traceparent: 'x' } })
    expect(read(null, 2).bulk).to.equal(false)
    // An older client's open, 7 or 8 fields, reads as no bulk.
    expect(read({ traceparent: 'x' }).bulk).to.equal(false)
  })

  it('an item frame names its bulk items by position; they decode to the frames after it, not copies', () => {
    const a = big(1); const b = big(2, BULK_MIN_BYTES + 5)
    const f = new ItemFrameBuilder(3, 1 << 20)
    f.add(packItem('first')); f.addBulk(a); f.add(packItem({ n: 2 })); f.addBulk(b)
    expect(f.bytes).to.be.above(a.length + b.length)
    const frame = f.take()
    const bulk = f.takeBulk()
    expect(bulk).to.deep.equal([a, b])
    expect(f.takeBulk()).to.have.length(0) // let go of: the builder keeps no reference
    expect(frame.length).to.be.below(64) // the bytes are not in it
    const msg = decode(frame, Limits, bulk)
    expect(msg).to.deep.include({ type: MessageType.STREAM_ITEM, id: 3 })
    expect(msg.items).to.have.length(4)
    expect(msg.items[0]).to.equal('first')
    expect(msg.items[1]).to.equal(a)
    expect(msg.items[2]).to.deep.equal({ n: 2 })
    expect(msg.items[3]).to.equal(b)
    // The next frame has no bulk items: two fields, as before.
    f.add(packItem(5))
    const plain = f.take()
    expect(f.takeBulk()).to.have.length(0)
    expect(decode(plain).items).to.deep.equal([5])
    expect(plain.equals(encodeStreamItems(3, [5]))).to.equal(true)
  })

  it('a receiver refuses bulk frames that do not match the positions the item frame names', () => {
    const bytes = big(7)
    const f = new ItemFrameBuilder(1, 1 << 20)
    f.add(packItem(1)); f.addBulk(bytes)
    const frame = f.take()
    expect(f.takeBulk()).to.deep.equal([bytes])
    refused(() => decode(frame)) //                                 names a frame that did not come
    refused(() => decode(frame, Limits, [bytes, bytes])) //           a frame nothing names
    refused(() => decode(frame, { ...Limits, maxMessageSize: BULK_MIN_BYTES - 1 }, [bytes])) // over the limit
    refused(() => decode(encodeStreamItems(1, [1, 2]), Limits, [bytes])) // an item frame that names none
    // Hand-made frames: a position out of range, one naming an item that is not nil, falling positions.
    const items = (list, at) => { const g = new ItemFrameBuilder(1, 1 << 20); for (const x of list) g.add(packItem(x)); return withPositions(g.take(), at) }
    refused(() => decode(items([null], [1]), Limits, [bytes]))
    refused(() => decode(items([1], [0]), Limits, [bytes]))
    refused(() => decode(items([null, null], [1, 0]), Limits, [bytes, bytes]))
    refused(() => decode(items([null, null], [0, 0]), Limits, [bytes, bytes]))
    expect(decode(items([null, null], [0, 1]), Limits, [bytes, big(8)]).items[1]).to.deep.equal(big(8))
    // No other stream message carries bulk frames.
    refused(() => decode(encodeStreamCredit(1, 1, 1), Limits, [bytes]))
  })

  it('with bulk, a large Buffer item is sent as it was yielded and spends its bytes of credit; without, it is copied', async () => {
    const yielded = big(9, 64000)
    const run = async (bulk) => {
      const sent = []
      const p = new StreamProducer({
        id: 4,
        source: (async function * () { yield 'small'; yield yielded; yield yielded })(),
        items: 100,
        bytes: 1 << 20,
        bulk,
        send: (frame, extra) => sent.push([frame, extra]),
        end: () => {},
      })
      await p.start()
      await new Promise((resolve) => setImmediate(resolve))
      let spent = 0
      for (const [frame, extra] of sent) { spent += frame.length; for (const x of extra) spent += x.length }
      expect(p.bytes).to.equal((1 << 20) - spent)
      return sent
    }
    const withBulk = await run(true)
    const frames = withBulk.flatMap(([, extra]) => extra)
    expect(frames).to.have.length(2)
    expect(frames[0]).to.equal(yielded) // the same Buffer: no copy
    expect(frames[1]).to.equal(yielded)
    const items = withBulk.flatMap(([frame, extra]) => decode(frame, Limits, extra).items)
    expect(items).to.deep.equal(['small', yielded, yielded])

    // Items ready together share a message, but never more than 64 bulk frames in one.
    const sent = []
    const many = new StreamProducer({
      id: 5,
      source: (async function * () { for (let i = 0; i < 150; i++) yield big(i) })(),
      items: 1000,
      bytes: 64 << 20,
      maxFrame: 64 << 20,
      maxBatchFrame: 64 << 20,
      bulk: true,
      send: (frame, extra) => sent.push(extra.length),
      end: () => {},
    })
    await many.start()
    await new Promise((resolve) => setImmediate(resolve))
    expect(sent.reduce((a, b) => a + b, 0)).to.equal(150)
    expect(Math.max(...sent)).to.equal(64)

    const without = await run(false)
    expect(without.flatMap(([, extra]) => extra)).to.have.length(0)
    expect(without.flatMap(([frame]) => decode(frame).items)).to.deep.equal(['small', yielded, yielded])
  })
})

describe('bulk items: a peer and a client over ZeroMQ', function () {
  this.timeout(20000)
  const h = harness()
  const raws = []
  afterEach(async () => {
    for (const s of raws.splice(0)) s.close()
    await h.cleanup()
  })

  const handlers = {
    async * chunks ({ n, size }) { for (let i = 0; i < n; i++) yield Buffer.alloc(size, i + 1) },
  }

  /** The messages (arrays of frames) of stream `id` a DEALER gets after opening it with `extra` open fields. */
  function rawStream (endpoint, id, n, size, ...extra) {
    return rawMessages(endpoint, encodeStreamOpen(id, 'chunks', { n, size }, 5000, 64, 64 << 20, false, ...extra))
  }

  /** The item messages a DEALER gets after sending `open`, up to the stream's end. */
  async function rawMessages (endpoint, open) {
    const sock = new zmq.Dealer({ linger: 0, receiveTimeout: 5000 })
    raws.push(sock)
    sock.connect(endpoint)
    await sock.send(open)
    const messages = []
    for (;;) {
      const frames = await sock.receive()
      const msg = decode(frames[0], Limits, frames.slice(1))
      if (msg.type === MessageType.STREAM_END) return messages
      messages.push({ frames, items: msg.items })
    }
  }

  it('a client that accepts them gets large Buffer items in frames of their own; one that does not, inline', async () => {
    const p = await h.peer({ handlers })
    const size = 64 * 1024
    const bulk = await rawStream(p.endpoint, 1, 3, size, null, Accepts.BULK)
    const bulkItems = bulk.flatMap((m) => m.items)
    expect(bulkItems.map((b) => b[0])).to.deep.equal([1, 2, 3])
    expect(bulkItems.every((b) => b.length === size)).to.equal(true)
    expect(bulk.every((m) => m.frames.length === 1 + m.items.length)).to.equal(true) // one bulk frame an item
    expect(bulk.every((m) => m.frames[0].length < 64)).to.equal(true)

    const inline = await rawStream(p.endpoint, 2, 3, size)
    expect(inline.every((m) => m.frames.length === 1)).to.equal(true)
    expect(inline.flatMap((m) => m.items).map((b) => b[0])).to.deep.equal([1, 2, 3])

    // Small Buffers stay in the item frame.
    const small = await rawStream(p.endpoint, 3, 3, BULK_MIN_BYTES - 1, null, Accepts.BULK)
    expect(small.every((m) => m.frames.length === 1)).to.equal(true)
  })

  it('client.stream reads large Buffer items byte for byte, mixed with small values, within its window', async () => {
    const p = await h.peer({
      handlers: {
        async * mixed ({ n }) {
          for (let i = 0; i < n; i++) { yield { i }; yield Buffer.alloc(BULK_MIN_BYTES + i, i % 251) }
        },
      },
    })
    const c = h.client({ seeds: [p.endpoint], streamWindow: { items: 8, bytes: 256 * 1024 } })
    await c.waitFor('mixed')
    const got = []
    for await (const x of c.stream('mixed', { n: 40 })) got.push(x)
    expect(got).to.have.length(80)
    for (let i = 0; i < 40; i++) {
      expect(got[2 * i]).to.deep.equal({ i })
      expect(Buffer.isBuffer(got[2 * i + 1])).to.equal(true)
      expect(got[2 * i + 1].equals(Buffer.alloc(BULK_MIN_BYTES + i, i % 251))).to.equal(true)
      // A frame of its own: the Buffer is the whole frame, not a slice of an item frame.
      expect(got[2 * i + 1].buffer.byteLength).to.equal(BULK_MIN_BYTES + i)
    }
    expect(c.stats().malformed).to.equal(0)
  })

  it('a generator in a worker thread: its large Buffer items come as bulk items too, or inline to a client that does not accept them', async () => {
    const p = await h.peer({ handlers: [new URL('../fixtures/work.js', import.meta.url).href], threads: 1 })
    const size = 64 * 1024
    const check = (items) => {
      expect(items).to.have.length(2 * 5 + 2)
      for (let i = 0; i < 5; i++) {
        expect(items[2 * i]).to.deep.equal({ i })
        expect(Buffer.from(items[2 * i + 1]).equals(Buffer.alloc(size + i, i % 251)), `item ${2 * i + 1}`).to.equal(true)
      }
      // The same Buffer yielded twice arrives twice, whole: a thread copies it, never detaches it.
      expect(Buffer.from(items[10]).equals(Buffer.alloc(size, 9))).to.equal(true)
      expect(Buffer.from(items[11]).equals(Buffer.alloc(size, 9))).to.equal(true)
    }
    const open = (id, ...extra) => rawMessages(p.endpoint, encodeStreamOpen(id, 'chunks', { n: 5, size }, 5000, 64, 64 << 20, false, ...extra))
    const bulk = await open(1, null, Accepts.BULK)
    check(bulk.flatMap((m) => m.items))
    expect(bulk.reduce((k, m) => k + m.frames.length - 1, 0)).to.equal(7) // one bulk frame a large item
    const inline = await open(2)
    check(inline.flatMap((m) => m.items))
    expect(inline.every((m) => m.frames.length === 1)).to.equal(true)
  })
})

/** `frame` (an item frame of two fields) with a third field of bulk positions `at`, as a sender might write it. */
function withPositions (frame, at) {
  expect(frame[5]).to.equal(0x92)
  const out = Buffer.concat([frame, Buffer.from([0x90 | at.length, ...at])])
  out[5] = 0x93
  return out
}
