// The main thread's side of a stream a handler thread produces (worker-pool.js stream()): the
// thread runs the generator and its credit (protocol/stream-producer.js) and sends item frames
// made there; this side passes the client's credit on, sends the frames as they are, and keeps
// a copy of the credit left, so the peer knows when the stream waits for its client. The
// client's bytes are lent to the thread a little at a time (at most two frames' worth ahead),
// only while the peer has room for what the stream sends (peer/streams.js room()): a client's
// credit alone would let a thread make up to 64 MiB a stream that no one reads.
import { errorFromValue } from '../protocol/issues.js'
import { ZeromeshError } from '../protocol/errors.js'
import { packr } from '../protocol/msgpack.js'

/** Items of a request stream forwarded to the thread and not yet read there, at most. */
export const THREAD_INPUT_AHEAD = 16

/**
 * The main thread's handle on a stream a thread produces: passes the client's credit on, keeps
 * a copy of the credit left (so the peer knows when the stream waits for it), and sends the
 * thread's item frames as they are.
 */
export class ThreadStream {
  constructor (t, sid, o) {
    this.t = t
    this.sid = sid
    this.o = o
    this.items = o.items //  the client's credit left
    this.bytes = o.bytes
    this.maxLent = 2 * o.maxFrame
    this.lent = 0 //         bytes of it the thread holds (below 0 when its last item took more)
    if (t !== null && (o.room?.() ?? true)) this.setLent(Math.min(o.bytes, this.maxLent)) // its first credit
    this.count = 0
    this.over = false
    this.input = o.input ?? null // the client's items (a StreamConsumer), for ctx.input in the thread
    this.ahead = THREAD_INPUT_AHEAD // items the thread has room for
    this.waiting = null
    if (this.input !== null && t !== null) this.forwardInput()
  }

  /**
   * A request stream: the client's items go to the thread as it reads them (packed, so the
   * handler sees the values a main-thread handler would), at most THREAD_INPUT_AHEAD ahead;
   * items are taken from the client's window only as they go, so its credit paces the client.
   */
  async forwardInput () {
    try {
      while (!this.over) {
        if (this.ahead <= 0) { await new Promise((resolve) => { this.waiting = resolve }); continue }
        const r = await this.input.next()
        if (this.over) return
        if (r.done) { this.t.worker.postMessage({ type: 'stream-input-end', sid: this.sid, error: null }); return }
        this.ahead--
        const item = new Uint8Array(packr.pack(r.value)) // its own bytes, to transfer
        this.t.worker.postMessage({ type: 'stream-input', sid: this.sid, item: item.buffer }, [item.buffer])
      }
    } catch (err) {
      if (!this.over) this.t.worker.postMessage({ type: 'stream-input-end', sid: this.sid, error: [err?.message ?? String(err), typeof err?.code === 'string' ? err.code : null] })
    }
  }

  /** The thread read `items` of the input: room for as many more. */
  inputRead (items) {
    this.ahead += items
    const w = this.waiting
    this.waiting = null
    w?.()
  }

  /** The handler stopped reading its input (it left its loop): the rest is not wanted. */
  inputStop () {
    this.input?.abandon(null)
  }

  get blocked () {
    return !this.over && (this.items <= 0 || this.bytes <= 0)
  }

  grant (items, bytes) {
    if (this.over) return
    this.items += items
    this.bytes += bytes
    this.lend(items)
  }

  /** The peer has room again for this stream's frames: lend the thread more of the client's bytes. */
  wake () {
    this.lend(0)
  }

  /** Bytes lent count against the peer's cap on what streams hold (o.hold) until their frames arrive. */
  setLent (lent) {
    const before = Math.max(this.lent, 0)
    this.lent = lent
    const after = Math.max(lent, 0)
    if (after !== before) this.o.hold?.(after - before)
  }

  /** Passes `items` of credit to the thread, and bytes up to maxLent ahead while the peer has room. */
  lend (items) {
    if (this.over || this.t === null) return
    const want = Math.min(this.bytes, this.maxLent) - this.lent
    const bytes = want > 0 && (this.o.room?.() ?? true) ? want : 0
    if (items === 0 && bytes === 0) return
    this.setLent(this.lent + bytes)
    this.t.worker.postMessage({ type: 'stream-credit', sid: this.sid, items, bytes })
  }

  cancel () {
    if (this.over) return
    this.over = true
    this.setLent(0)
    this.inputRead(0)
    this.t?.streams.delete(this.sid)
    this.t?.worker.postMessage({ type: 'stream-cancel', sid: this.sid })
  }

  /**
   * An item frame from the thread, and the bulk frames it names, if any (it counted the
   * credit there; the count here mirrors it).
   */
  item (frame, bulk) {
    if (this.over) return
    const n = frameItems(frame)
    let bytes = frame.length
    if (bulk !== undefined) for (let i = 0; i < bulk.length; i++) bytes += bulk[i].length
    this.items -= n
    this.bytes -= bytes
    this.setLent(this.lent - bytes)
    this.count += n
    this.o.send(frame, bulk)
    this.lend(0)
  }

  ended (error, count, expired = false) {
    if (this.over) return
    this.over = true
    this.setLent(0)
    this.inputRead(0)
    this.count = count
    this.o.end(error === null ? null : errorFromValue(error, ZeromeshError), count, expired)
  }
}

/** How many items an item frame carries, from its array header after the id (stream-codec.js). */
function frameItems (frame) {
  let at = 6 // header (5) and 0x92 (0x93 with bulk items: their positions follow the items)
  const b = frame[at]
  at += b < 0x80 ? 1 : b === 0xcc ? 2 : b === 0xcd ? 3 : b === 0xce ? 5 : 9
  const h = frame[at]
  if ((h & 0xf0) === 0x90) return h & 0x0f
  return h === 0xdc ? frame.readUInt16BE(at + 1) : frame.readUInt32BE(at + 1)
}
