import { expect } from 'chai'
import { Unpackr } from 'msgpackr'
import {
  packEntry, packEntryWithRoom, requestFrame, replyFrame, replyHead, replyRoom, loneReplyFrame, Packed, packValue, MAX_ROOM,
} from '../../protocol/frames.js'
import { encodeRequest, encodeReply, decode } from '../../protocol/codec.js'

// The frame builders keep msgpackr's results without copying them (protocol/frames.js): a result must
// stay intact however many packs follow, across msgpackr's slab replacements.
describe('codec buffers', () => {
  it('a packed entry and a frame stay intact while thousands of packs follow, small and large', () => {
    const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true })
    const kept = []
    for (let i = 0; i < 200; i++) kept.push([i, packEntry([i, 'echo', { i, s: 'x'.repeat(i * 7) }, 1000])])
    const frames = [encodeRequest([[1, 'a', 'first', 5]]), encodeReply({ mv: 1 }, [[1, 0, 'r']])]
    for (let i = 0; i < 5000; i++) packEntry([i, 'noise', 'y'.repeat(i % 3000), i])
    for (let i = 0; i < 20; i++) packEntry({ big: Buffer.alloc(20000 + i, 7) }) // larger than a slab
    for (const [i, b] of kept) expect(unpackr.unpack(b)).to.deep.equal([i, 'echo', { i, s: 'x'.repeat(i * 7) }, 1000])
    expect(decode(frames[0]).requests).to.deep.equal([{ id: 1, method: 'a', args: 'first', timeoutMs: 5, trace: null, bulk: false, values: false, headers: {} }])
    expect(decode(frames[1]).replies).to.deep.equal([{ id: 1, status: 0, value: 'r' }])
  })

  it('joined frames are byte-identical to frames encoded whole, for 0 to 70000 entries', () => {
    for (const n of [0, 1, 15, 16, 300, 65535, 70000]) {
      const entries = Array.from({ length: n }, (_, i) => [i + 1, 'm', i, 10])
      expect(requestFrame(entries.map(packEntry)).equals(encodeRequest(entries))).to.equal(true)
      const replies = Array.from({ length: n }, (_, i) => [i + 1, 0, { v: i }])
      expect(replyFrame({ mv: 3, load: 1 }, replies.map(packEntry)).equals(encodeReply({ mv: 3, load: 1 }, replies))).to.equal(true)
    }
  })

  it('a lone reply written around its entry in place has the bytes of one encoded whole, and lone frames keep them while packs follow', () => {
    const meta = { mv: 9, load: 2 }
    const head = replyHead(meta)
    const kept = []
    for (let i = 0; i < 300; i++) {
      const req = [i + 1, 'echo', { s: 'x'.repeat(i * 5) }, 1000]
      const rep = [i + 1, 0, { s: 'y'.repeat(i * 5) }]
      const reqFrame = encodeRequest([req]) // a lone request's frame, packed in one go
      const repFrame = loneReplyFrame(head, packEntryWithRoom(rep, replyRoom(head)))
      // what a peer remembers of a lone reply: the entry's own bytes, behind the room
      expect(repFrame.subarray(replyRoom(head)).equals(packEntry(rep))).to.equal(true)
      kept.push([reqFrame, Buffer.from(encodeRequest([req])), repFrame, Buffer.from(encodeReply(meta, [rep]))])
      packEntry(['noise', 'z'.repeat(i * 13)])
    }
    for (let i = 0; i < 20; i++) packEntry({ big: Buffer.alloc(20000 + i, 7) }) // larger than a slab
    for (const [reqFrame, reqWhole, repFrame, repWhole] of kept) {
      expect(reqFrame.equals(reqWhole)).to.equal(true)
      expect(repFrame.equals(repWhole)).to.equal(true)
    }
    expect(packEntryWithRoom([1, 'm', null, 5], 0).equals(packEntry([1, 'm', null, 5]))).to.equal(true)
  })

  it('a reply entry whose value a thread encoded (Packed) has the bytes of one packed whole, with or without room in front', () => {
    const values = [null, 0, 2 ** 40, 'x'.repeat(70000), { op: 'echo', n: 12345, s: 'twenty-byte-payload!' }, [1, [2, [3]]], Buffer.alloc(300, 7)]
    for (const id of [0, 1, 300, 2 ** 53 - 1]) {
      for (const v of values) {
        for (const room of [0, 9, MAX_ROOM]) {
          const whole = packEntryWithRoom([id, 0, v], room)
          const spliced = packEntryWithRoom([id, 0, new Packed(Buffer.from(packValue(v)))], room)
          expect(spliced.length).to.equal(whole.length)
          expect(Buffer.compare(spliced.subarray(room), whole.subarray(room))).to.equal(0)
        }
      }
    }
  })
})

describe('stream item frames', () => {
  it('frames built item by item are byte-identical to [id, [items]] packed whole: large Buffers copied once, ids and counts of every size, slabs moved and left', async () => {
    const { ItemFrameBuilder, packItem } = await import('../../protocol/stream-codec.js')
    const { frame } = await import('../../protocol/msgpack.js')
    const { MessageType } = await import('../../protocol/constants.js')
    const whole = (id, items) => frame(MessageType.STREAM_ITEM, [id, items])
    const big = (n, fill) => Buffer.alloc(n, fill)
    const cases = [
      [1, [1, 'a', null]],
      [200, [big(16384, 1), { x: 1 }, big(70000, 2), new Uint8Array(20000).fill(3)]], // bin 16 and bin 32 headers, a Uint8Array
      [70000, Array.from({ length: 20 }, (_, i) => big(30000 + i, i))], // the slab moves mid-frame (it starts small)
      [2 ** 33, Array.from({ length: 70000 }, (_, i) => i)], // a 9-byte id, a 5-byte array header
      [5, [big(3 << 20, 9)]], // one item larger than the largest frame of several
    ]
    const b = new ItemFrameBuilder(0, 1 << 20)
    const frames = []
    for (const [id, items] of cases) {
      b.id = id
      for (const v of items) b.add(packItem(v))
      frames.push(b.take())
    }
    for (let i = 0; i < cases.length; i++) expect(frames[i].equals(whole(...cases[i])), `case ${i}`).to.equal(true)
    expect(b.take()).to.equal(null)
    // The caller's Buffer is free once added: refilling it changes no frame.
    const reused = big(40000, 1)
    const c = new ItemFrameBuilder(7, 1 << 20)
    c.add(packItem(reused)); reused.fill(2); c.add(packItem(reused))
    const f = c.take()
    expect(f.equals(whole(7, [big(40000, 1), big(40000, 2)]))).to.equal(true)
    for (const [i, fr] of frames.entries()) expect(fr.equals(whole(...cases[i])), `case ${i} after later frames`).to.equal(true)
  })

  it('a lone item frame is made around the packed item, not copied: byte-identical to [id, [item]] for ids of every size, intact after later packs', async () => {
    const { packItem, loneItemFrame } = await import('../../protocol/stream-codec.js')
    const { frame, packr } = await import('../../protocol/msgpack.js')
    const { MessageType } = await import('../../protocol/constants.js')
    const made = []
    for (const id of [0, 200, 70000, 2 ** 33]) {
      const value = { i: id, pad: Buffer.alloc(20000 + id % 7, 5) } // packed by msgpackr, not a BinItem
      const packed = packItem(value)
      const f = loneItemFrame(id, packed)
      expect(f.buffer, 'the frame shares the packed item\'s memory').to.equal(packed.buffer)
      expect(f.byteOffset + f.length).to.equal(packed.byteOffset + packed.length)
      made.push([f, frame(MessageType.STREAM_ITEM, [id, [value]])])
    }
    for (let i = 0; i < 50; i++) packr.pack({ filler: Buffer.alloc(30000, i) }) // msgpackr moves on, to new slabs
    for (const [i, [f, whole]] of made.entries()) expect(f.equals(whole), `id ${i}`).to.equal(true)
  })

  // A handler thread transfers its frames to the main thread (peer/worker.js). Packing each
  // large item into msgpackr's slab and copying it out left a slab behind every few items: on
  // Node 24 a thread streaming 1 MB items held 150 MB of them before it collected.
  it('for a thread, a large item gets a buffer of its own that its lone frame fills, and msgpackr reuses one slab for a stream of them', async () => {
    const { packItemToTransfer, loneItemFrame, LONE_ITEM_BYTES } = await import('../../protocol/stream-codec.js')
    const { frame, packr } = await import('../../protocol/msgpack.js')
    const { MessageType } = await import('../../protocol/constants.js')
    const kept = packr.pack({ kept: 'x'.repeat(100) }) // packed before: must stay intact
    const keptCopy = Buffer.from(kept)
    const slabs = new Set()
    const made = []
    for (let i = 0; i < 40; i++) {
      const value = { i, pad: Buffer.alloc(LONE_ITEM_BYTES * 64, i) }
      const packed = packItemToTransfer(value)
      const f = loneItemFrame(i, packed)
      expect(f.byteOffset + f.length, 'the frame runs to its buffer\'s end').to.equal(f.buffer.byteLength)
      expect(f.byteOffset).to.be.below(32) // only head room, unused, in front
      const next = packr.pack({ after: i }) // where msgpackr writes next: over the large item's place
      slabs.add(next.buffer)
      made.push([f, value])
    }
    expect(slabs.size, 'slabs msgpackr used for 40 items of 1 MiB').to.equal(1)
    for (const [i, [f, value]] of made.entries()) expect(f.equals(frame(MessageType.STREAM_ITEM, [i, [value]])), `item ${i}`).to.equal(true)
    expect(kept.equals(keptCopy)).to.equal(true)
    const small = packItemToTransfer({ s: 1 })
    expect(small.buffer.byteLength, 'a small item stays in the slab').to.be.above(small.length + 32)
  })
})

describe('stream producer', () => {
  const decodeItems = async (f) => {
    const { unpackr } = await import('../../protocol/msgpack.js')
    const { HEADER_SIZE } = await import('../../protocol/constants.js')
    return unpackr.unpack(f.subarray(HEADER_SIZE))[1]
  }
  async function * source (values) { for (const v of values) yield v }

  it('a large packed item leaves alone after the small ones before it, and waits for credit when their frame spent it', async () => {
    const { StreamProducer } = await import('../../protocol/stream-producer.js')
    const { packItem, itemFrameOverhead, LONE_ITEM_BYTES } = await import('../../protocol/stream-codec.js')
    const small = [{ s: 1 }, { s: 2 }, { s: 3 }]
    const large = { pad: Buffer.alloc(LONE_ITEM_BYTES, 7) }
    const smallBytes = small.reduce((n, v) => n + packItem(v).length, 0)
    // Byte credit for the small items and one byte more: it is spent by their frame's head.
    const credit = smallBytes + 1
    expect(itemFrameOverhead(1, 3)).to.be.above(1)
    const sent = []
    let ended = null
    const p = new StreamProducer({ id: 1, source: source([...small, large, { s: 4 }]), items: 10, bytes: credit, send: (f) => sent.push(f), end: (err, count) => { ended = { err, count } } })
    p.start()
    for (let i = 0; i < 50 && !p.blocked; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(sent.length, 'the small items left in one frame; the large one waits').to.equal(1)
    expect(await decodeItems(sent[0])).to.deep.equal(small)
    expect(p.blocked).to.equal(true)
    p.grant(10, 1 << 20)
    await p.done
    expect(ended).to.deep.equal({ err: null, count: 5 })
    expect(sent.length).to.equal(3)
    const lone = await decodeItems(sent[1])
    expect(lone.length).to.equal(1)
    expect(Buffer.from(lone[0].pad).equals(large.pad)).to.equal(true)
    expect(await decodeItems(sent[2])).to.deep.equal([{ s: 4 }])
  })
})
