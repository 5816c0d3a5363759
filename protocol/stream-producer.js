// The sending side of a stream (PROTOCOL.md 4.10): pulls items from an async iterator only
// while the receiver's credit allows, packs each one, and sends them in item frames. Items
// ready in the same turn of the event loop leave together in one frame (as many as the credit,
// the frame size and the batch limit allow); an item that takes longer does not hold the ones
// before it. An item that packs to LONE_ITEM_BYTES or more leaves alone, in a frame made
// around its packed bytes (no copy). With `bulk` (the receiver reads bulk items), a large
// Buffer item is not copied at all: it leaves as it is, in a frame of its own after its item
// frame. A peer runs it for a handler's results (on the main thread or in a handler thread),
// a client for the items it sends.
//
// Credit rule: a frame of n items and b bytes (the whole message: the frame and its bulk
// frames) spends n items and b bytes. A
// frame leaves only while at least 1 item and 1 byte of credit are left, and never with more
// items than are left; it may overdraw the bytes, after which nothing leaves until the
// receiver has granted enough to bring them above 0 again.
import { packItem, packItemToTransfer, itemFrameOverhead, ItemFrameBuilder, BinItem, loneItemFrame, LONE_ITEM_BYTES, MAX_BULK_ITEMS } from './stream-codec.js'
import { isBulkValue } from './bulk.js'
import { RemoteCode, ZeromeshError } from './errors.js'
import { Limits } from './constants.js'

const NONE = Object.freeze([])

export class StreamProducer {
  /**
   * @param {object} o
   * @param {number} o.id         the stream's id
   * @param {AsyncIterator<unknown>} o.source
   * @param {number} o.items      first credit, in items...
   * @param {number} o.bytes      ...and in bytes
   * @param {number} [o.maxFrame] largest frame to send: one item may take this much
   * @param {number} [o.maxBatchFrame] largest frame of several items (default: maxFrame, at most the default 1 MiB limit every side accepts)
   * @param {number} [o.maxBatch] most items in one frame
   * @param {boolean} [o.bulk]    the receiver takes bulk items (PROTOCOL.md 4.10): a large Buffer item is sent as it is, in a frame of its own after its item frame
   * @param {(frame: Buffer, bulk: Buffer[], own: boolean) => void} o.send  one message: the item frame and the bulk frames it names (often none); `own` when the frame is the whole of its ArrayBuffer but head room in front (o.transfer)
   * @param {boolean} [o.transfer] frames go to another thread: a large item is packed into a buffer of its own (packItemToTransfer), which send() may transfer
   * @param {() => boolean} [o.room] false while what was sent still waits to leave (a full pipe): pulling pauses until wake()
   * @param {(err: Error|null, count: number) => void} o.end  the source ended (null) or threw, or an item could not be sent; not called after cancel()
   */
  constructor (o) {
    this.id = o.id
    this.source = o.source
    this.items = o.items
    this.bytes = o.bytes
    this.maxFrame = o.maxFrame ?? Limits.maxMessageSize
    this.maxBatchFrame = o.maxBatchFrame ?? Math.min(this.maxFrame, Limits.maxMessageSize)
    this.maxBatch = o.maxBatch ?? Limits.maxBatch
    this.send = o.send
    this.bulk = o.bulk === true
    this.pack = o.transfer === true ? packItemToTransfer : packItem
    this.room = o.room ?? null
    this.onEnd = o.end
    this.count = 0 //    items sent
    this.frame = new ItemFrameBuilder(this.id, this.maxBatchFrame) // the items waiting for the end of this turn
    this.flushQueued = false
    this.over = false
    this.waiting = null // resolves the wait for credit
  }

  /** Starts pulling; returns a promise of the end (it never rejects). */
  start () {
    this.done = this.pump().catch((err) => this.finish(err))
    return this.done
  }

  /** The receiver granted more credit (wake() alone: room to send again). */
  grant (items, bytes) {
    this.items += items
    this.bytes += bytes
    this.wake()
  }

  /** Whether the producer waits for credit (the receiver holds all it may). */
  get blocked () {
    return !this.over && (this.items <= 0 || this.bytes <= 0)
  }

  /** Stops pulling and ends the source (its `finally` runs); nothing more is sent, end is not called. */
  cancel () {
    if (this.over) return
    this.over = true
    this.frame = new ItemFrameBuilder(this.id, this.maxBatchFrame) // what waited is dropped
    this.wake()
    closeSource(this.source)
  }

  wake () {
    const w = this.waiting
    this.waiting = null
    w?.()
  }

  async pump () {
    while (!this.over) {
      if (this.items - this.frame.n <= 0 || this.bytes - this.frame.bytes <= 0) {
        this.flush()
        if (this.items <= 0 || this.bytes <= 0) await new Promise((resolve) => { this.waiting = resolve })
        continue
      }
      if (this.room !== null && !this.room()) {
        this.flush()
        if (!this.room()) await new Promise((resolve) => { this.waiting = resolve })
        continue
      }
      const r = await this.source.next()
      if (this.over) return
      if (r.done) {
        this.flush()
        return this.finish(null)
      }
      const f = this.frame
      if (this.bulk && isBulkValue(r.value) && r.value.length <= this.maxFrame) {
        // Sent as it is, after its item frame: the source must not change it (docs/guides/streams.md).
        const len = r.value.length
        if (f.n > 0 && (f.n >= this.maxBatch || f.bulk.length >= MAX_BULK_ITEMS || itemFrameOverhead(this.id, f.n + 1) + f.bytes + len > this.maxBatchFrame)) this.flush()
        f.addBulk(r.value)
        this.flushSoon()
        continue
      }
      let packed
      try {
        packed = this.pack(r.value)
      } catch (err) {
        throw new ZeromeshError(`stream item ${this.count + this.frame.n} could not be encoded: ${err?.message ?? err}`, { code: RemoteCode.ENCODE })
      }
      if (itemFrameOverhead(this.id, 1) + packed.length > this.maxFrame) {
        throw new ZeromeshError(`stream item ${this.count + this.frame.n} of ${packed.length} bytes is larger than a frame may be (maxMessageSize ${this.maxFrame})`, { code: RemoteCode.TOO_LARGE })
      }
      if (packed.length >= LONE_ITEM_BYTES && !(packed instanceof BinItem)) {
        // A large packed item goes alone, its frame made around it: no copy into a slab.
        this.flush() // the items before it leave first, and may spend the credit left
        while (!this.over && (this.items <= 0 || this.bytes <= 0)) await new Promise((resolve) => { this.waiting = resolve })
        if (!this.over) this.sent(1, loneItemFrame(this.id, packed), NONE, this.pack === packItemToTransfer)
        continue
      }
      if (f.n > 0 && (f.n >= this.maxBatch || itemFrameOverhead(this.id, f.n + 1) + f.bytes + packed.length > this.maxBatchFrame)) this.flush()
      f.add(packed) // copied now: the source may reuse its Buffer when it runs again
      this.flushSoon()
    }
  }

  /** The items added this turn leave at its end, together. */
  flushSoon () {
    if (this.flushQueued) return
    this.flushQueued = true
    setImmediate(() => { this.flushQueued = false; if (!this.over) this.flush() })
  }

  flush () {
    const n = this.frame.n
    if (n === 0) return
    const frame = this.frame.take()
    this.sent(n, frame, this.frame.takeBulk())
  }

  /** Spends the credit for a frame of `n` items (and the bulk frames after it) and sends it. */
  sent (n, frame, bulk, own = false) {
    let bytes = frame.length
    for (let i = 0; i < bulk.length; i++) bytes += bulk[i].length
    this.items -= n
    this.bytes -= bytes
    this.count += n
    this.send(frame, bulk, own)
  }

  finish (err) {
    if (this.over) return
    this.flush() // the items before an error arrive before it
    if (err !== null) closeSource(this.source)
    this.over = true
    this.onEnd(err, this.count)
  }
}

/** Ends an iterator early: its generator's `finally` runs, a Readable is destroyed. */
export function closeSource (source) {
  try {
    const r = source.return?.()
    if (r !== null && typeof r?.then === 'function') r.then(null, () => {})
  } catch {}
}

/** Whether a handler's result is a stream of items (an async generator, a Readable, any async iterable). */
export function isStream (out) {
  return out !== null && typeof out === 'object' && typeof out[Symbol.asyncIterator] === 'function'
}
