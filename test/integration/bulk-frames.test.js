// Bulk frames (PROTOCOL.md 4.2.1): a large binary result travels in a ZeroMQ frame of its own
// after its REPLY frame, to a client whose request said it reads them, and inline to one that
// did not; a client refuses a reply whose bulk frames do not match what it names.
import path from 'node:path'
import { tmpdir } from 'node:os'
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import {
  decode, encodeRequest, encodeReply, MessageType, Status, Accepts, BULK_MIN_BYTES, ProtocolError, Limits,
} from '../../protocol/index.js'
import { bulkReplyFrame, isBulkValue } from '../../protocol/bulk.js'
import { replyHead } from '../../protocol/frames.js'

const refused = (fn) => { try { fn() } catch (err) { expect(err).to.be.instanceOf(ProtocolError); return err } throw new Error('decoded') }

describe('bulk frames: the codec', () => {
  const head = replyHead({ mv: 1, load: 0 })
  const bytes = Buffer.alloc(BULK_MIN_BYTES, 5)

  it('a bulk reply decodes to the frame after it, and only with exactly that frame', () => {
    const frame = bulkReplyFrame(head, 9)
    const msg = decode(frame, Limits, [bytes])
    expect(msg.replies).to.have.length(1)
    expect(msg.replies[0]).to.deep.include({ id: 9, status: Status.OK })
    expect(msg.replies[0].value).to.equal(bytes) // the frame itself, not a copy
    refused(() => decode(frame)) //                  names a frame that did not come
    refused(() => decode(frame, Limits, [bytes, bytes])) // a frame nothing names
    refused(() => decode(frame, { ...Limits, maxMessageSize: BULK_MIN_BYTES - 1 }, [bytes])) // over the limit
  })

  it('a bulk entry must be OK with a nil value, naming its frames in order; no other type carries bulk frames', () => {
    refused(() => decode(encodeReply({}, [[1, Status.REMOTE, ['x', null], 0]]), Limits, [bytes]))
    refused(() => decode(encodeReply({}, [[1, Status.OK, 'value', 0]]), Limits, [bytes]))
    refused(() => decode(encodeReply({}, [[1, Status.OK, null, 1]]), Limits, [bytes, bytes]))
    refused(() => decode(encodeReply({}, [[1, Status.OK, null, 0], [2, Status.OK, null, 0]]), Limits, [bytes, bytes]))
    refused(() => decode(encodeReply({}, [[1, Status.OK, null, -1]]), Limits, [bytes]))
    const two = decode(encodeReply({}, [[1, Status.OK, null, 0], [2, Status.OK, 'inline'], [3, Status.OK, null, 1]]), Limits, [bytes, Buffer.from('b')])
    expect(two.replies.map((r) => r.value)).to.deep.equal([bytes, 'inline', Buffer.from('b')])
    refused(() => decode(encodeRequest([[1, 'echo', 1, 0]]), Limits, [bytes]))
    // A nil (or undefined) fourth field is no bulk reference.
    expect(decode(encodeReply({}, [[1, Status.OK, 'v', null]])).replies[0].value).to.equal('v')
    expect(decode(encodeReply({}, [[1, Status.OK, 'v', undefined]])).replies[0].value).to.equal('v')
  })

  it('a request entry says whether its sender reads bulk frames (accepts, after the trace field)', () => {
    const read = (entry) => decode(encodeRequest([entry])).requests[0].bulk
    expect(read([1, 'm', 1, 0])).to.equal(false)
    expect(read([1, 'm', 1, 0, null, Accepts.BULK])).to.equal(true)
    expect(read([1, 'm', 1, 0, { traceparent: 'x' }, Accepts.BULK | 2])).to.equal(true)
    expect(read([1, 'm', 1, 0, null, 2])).to.equal(false)
    expect(read([1, 'm', 1, 0, null, 'yes'])).to.equal(false)
  })

  it('Buffers and plain Uint8Arrays from BULK_MIN_BYTES go in bulk frames; other values do not', () => {
    expect(isBulkValue(Buffer.alloc(BULK_MIN_BYTES))).to.equal(true)
    expect(isBulkValue(new Uint8Array(BULK_MIN_BYTES))).to.equal(true)
    expect(isBulkValue(Buffer.alloc(BULK_MIN_BYTES - 1))).to.equal(false)
    expect(isBulkValue(new Float64Array(BULK_MIN_BYTES))).to.equal(false)
    expect(isBulkValue(new Uint8ClampedArray(BULK_MIN_BYTES))).to.equal(false)
    expect(isBulkValue('x'.repeat(BULK_MIN_BYTES))).to.equal(false)
  })
})

describe('bulk frames: a peer and a client over ZeroMQ', function () {
  this.timeout(20000)
  const h = harness()
  const raws = []
  afterEach(async () => {
    for (const s of raws.splice(0)) s.close()
    await h.cleanup()
  })

  /** A DEALER connected to `endpoint`, and ask(entry): the frames of the reply to a REQUEST of that entry. */
  function rawClient (endpoint) {
    const sock = new zmq.Dealer({ linger: 0, receiveTimeout: 5000 })
    raws.push(sock)
    sock.connect(endpoint)
    return async (entry) => { await sock.send(encodeRequest([entry])); return sock.receive() }
  }

  it('a client that accepts them gets a large Buffer in a frame of its own; one that does not, inline; a duplicate gets the same bulk reply', async () => {
    let runs = 0
    const p = await h.peer({
      handlers: {
        bytes: ({ size, fill }) => { runs++; return Buffer.alloc(size, fill) },
        floats: (n) => new Float64Array(n).fill(0.5),
      },
    })
    const ask = rawClient(p.endpoint)
    const size = 64 * 1024

    const bulk = await ask([1, 'bytes', { size, fill: 3 }, 5000, null, Accepts.BULK])
    expect(bulk).to.have.length(2)
    expect(bulk[1].equals(Buffer.alloc(size, 3))).to.equal(true)
    const reply = decode(bulk[0], Limits, bulk.slice(1))
    expect(reply.type).to.equal(MessageType.REPLY)
    expect(reply.replies[0].id).to.equal(1)
    expect(bulk[0].length).to.be.below(64) // the reply frame names the bulk frame; the bytes are not in it

    const inline = await ask([2, 'bytes', { size, fill: 4 }, 5000])
    expect(inline).to.have.length(1)
    expect(Buffer.from(decode(inline[0]).replies[0].value).equals(Buffer.alloc(size, 4))).to.equal(true)

    const again = await ask([1, 'bytes', { size, fill: 3 }, 5000, null, Accepts.BULK])
    expect(again).to.have.length(2)
    expect(again[1].equals(bulk[1])).to.equal(true)
    // A large inline reply is remembered too (the ring keeps it packed): the same frame again.
    const inlineAgain = await ask([2, 'bytes', { size, fill: 4 }, 5000])
    expect(inlineAgain).to.have.length(1)
    expect(Buffer.from(decode(inlineAgain[0]).replies[0].value).equals(Buffer.alloc(size, 4))).to.equal(true)
    expect(runs).to.equal(2)
    expect(p.stats().duplicates).to.equal(2)

    // Small Buffers and other typed arrays stay in the reply frame.
    expect(await ask([3, 'bytes', { size: BULK_MIN_BYTES - 1, fill: 1 }, 5000, null, Accepts.BULK])).to.have.length(1)
    expect(await ask([4, 'floats', size, 5000, null, Accepts.BULK])).to.have.length(1)
  })

  it('a handler in a worker thread: its large Buffer comes back in a bulk frame, or inline to a client that does not accept them', async () => {
    const p = await h.peer({ handlers: [new URL('../fixtures/work.js', import.meta.url).href], threads: 1 })
    const ask = rawClient(p.endpoint)
    const size = 100000
    const bulk = await ask([1, 'bytes', { size, fill: 6 }, 5000, null, Accepts.BULK])
    expect(bulk).to.have.length(2)
    expect(bulk[1].equals(Buffer.alloc(size, 6))).to.equal(true)
    const inline = await ask([2, 'bytes', { size, fill: 2 }, 5000])
    expect(inline).to.have.length(1)
    expect(Buffer.from(decode(inline[0]).replies[0].value).equals(Buffer.alloc(size, 2))).to.equal(true)
    // A batch of several, small and large, from one hand-off: each comes back whole.
    const c = h.client({ seeds: [p.endpoint] })
    const sizes = [10, BULK_MIN_BYTES, 70000, 5, 300000]
    const got = await Promise.all(sizes.map((s, i) => c.request('bytes', { size: s, fill: i + 1 })))
    got.forEach((b, i) => expect(b.equals(Buffer.alloc(sizes[i], i + 1)), `result ${i}`).to.equal(true))
  })

  it('Client.request returns a large Buffer result byte for byte, up to maxMessageSize, and one over it fails TOO_LARGE', async () => {
    const p = await h.peer({ handlers: { bytes: ({ size }) => { const b = Buffer.allocUnsafe(size); for (let i = 0; i < size; i += 4096) b[i] = i % 251; return b } } })
    const c = h.client({ seeds: [p.endpoint] })
    for (const size of [BULK_MIN_BYTES, 1000000, Limits.maxMessageSize]) {
      const got = await c.request('bytes', { size })
      expect(Buffer.isBuffer(got)).to.equal(true)
      expect(got.length).to.equal(size)
      for (let i = 0; i < size; i += 4096) expect(got[i]).to.equal(i % 251)
    }
    const err = await c.request('bytes', { size: Limits.maxMessageSize + 1 }).catch((e) => e)
    expect(err.remoteCode).to.equal('ERR_ZEROMESH_TOO_LARGE')
  })

  it('a client drops a reply whose bulk frames do not match it, and takes the good reply after', async () => {
    const ep = `ipc://${path.join(tmpdir(), `zm-bulk-${process.pid}-${Date.now()}`)}`
    const fake = new zmq.Router({ linger: 0, routingId: ep })
    raws.push(fake)
    await fake.bind(ep)
    const good = Buffer.alloc(BULK_MIN_BYTES, 8)
    const head = replyHead({ mv: 0, load: 0 })
    let sawAccepts = null
    ;(async () => {
      for await (const [id, frame] of fake) {
        const msg = decode(frame)
        if (msg.type !== MessageType.REQUEST) continue // SERVICE_GET and the rest: an older peer's silence
        const r = msg.requests[0]
        sawAccepts = r.bulk
        await fake.send([id, bulkReplyFrame(head, r.id)]) //                  names a frame it does not send
        await fake.send([id, bulkReplyFrame(head, r.id), good, good]) //     sends one it does not name
        await fake.send([id, encodeReply({}, [[r.id, Status.OK, 'x', 0]]), good]) // a value and a frame
        await fake.send([id, bulkReplyFrame(head, r.id), good])
      }
    })().catch(() => {})
    const c = h.client({ seeds: [ep], discover: false })
    const got = await c.request('anything', null, { timeout: 5000 })
    expect(sawAccepts).to.equal(true)
    expect(got.equals(good)).to.equal(true)
    await eventually(() => expect(c.stats().malformed).to.equal(3))
  })
})
