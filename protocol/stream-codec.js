// Encode and decode the stream messages (PROTOCOL.md 4.10): STREAM_OPEN, STREAM_ITEM,
// STREAM_CREDIT and STREAM_END. A stream's items are packed one by one as they come (a
// producer checks each against its credit) and joined into an item frame without being packed
// again, as request entries are.
import { HEADER_SIZE, MessageType, Status, Limits, Accepts } from './constants.js'
import { checkValue, checkList, isUint, fail, traceCarrier } from './validate.js'
import { readIssues } from './issues.js'
import { readHeaders, NO_HEADERS } from './headers.js'
import { packr, frame, writeHead, writeArrayHeader, arrayHeaderSize, RESERVE_START_SPACE } from './msgpack.js'

export const STREAM_TYPES = new Set([MessageType.STREAM_OPEN, MessageType.STREAM_ITEM, MessageType.STREAM_CREDIT, MessageType.STREAM_END])

/**
 * A STREAM_OPEN frame: `[id, method, args, timeoutMs, items, bytes, input, trace, accepts, headers]`.
 * `items` and `bytes` are the first credit the client grants; `input` says the client will
 * send items too; `trace` is the trace field of PROTOCOL.md 4.1 (nil when null and more
 * follows); `accepts` (bits of Accepts, 0: left out) what the client reads in item messages;
 * `headers` the request headers (4.1), left out when null.
 */
export function encodeStreamOpen (id, method, args, timeoutMs, items, bytes, input, trace = null, accepts = 0, headers = null) {
  const body = [id, method, args, timeoutMs, items, bytes, input]
  if (trace !== null || accepts !== 0 || headers !== null) body.push(trace)
  if (accepts !== 0 || headers !== null) body.push(accepts)
  if (headers !== null) body.push(headers)
  return frame(MessageType.STREAM_OPEN, body)
}

const BIN_BY_REFERENCE = 16384 // a Buffer item this large is copied once, into its frame, not packed first

// The most an item frame's head takes: header, the fixarray of 2 or 3, the id, the items' array header.
const HEAD_ROOM = HEADER_SIZE + 1 + 9 + 5
/** The most bulk items one item frame names (a producer flushes at this many). */
export const MAX_BULK_ITEMS = 64
// The most its tail takes: the positions of its bulk items, each below 2^16 (maxBatch's cap).
const TAIL_ROOM = 3 + 3 * MAX_BULK_ITEMS
const NO_BULK = Object.freeze([])

/** A packed item this large leaves in a frame of its own, made in place (loneItemFrame). */
export const LONE_ITEM_BYTES = 16384

/**
 * One item packed on its own, to be joined into an item frame by ItemFrameBuilder or to be
 * the one item of a frame made in place by loneItemFrame (msgpackr leaves room for the frame's
 * head in front of it). A large Buffer or Uint8Array is not packed: it is kept as it is with
 * its MessagePack bin header (a BinItem) and copied once, into the frame, instead of twice.
 * Either way `.length` is the item's packed size. A BinItem still refers to the caller's
 * bytes: its frame must be joined before the source runs again (a generator may refill the
 * same Buffer), as the producer does.
 */
export function packItem (value) {
  if (value instanceof Uint8Array && value.length >= BIN_BY_REFERENCE && (value.constructor === Buffer || value.constructor === Uint8Array)) return new BinItem(value)
  return packr.pack(value, RESERVE_START_SPACE | HEAD_ROOM).subarray(HEAD_ROOM)
}

/**
 * packItem for a thread that hands its frames to another thread (peer/worker.js): an item that
 * packs to LONE_ITEM_BYTES or more is copied at once into a buffer of its own, with the frame's
 * head room in front (loneItemFrame's frame of it can be transferred whole, with no further
 * copy), and msgpackr's slab is rewound over it, so a stream of large items reuses one slab
 * instead of leaving one behind every few items for the garbage collector.
 */
export function packItemToTransfer (value) {
  const packed = packItem(value)
  if (packed instanceof BinItem || packed.length < LONE_ITEM_BYTES) return packed
  const own = Buffer.allocUnsafeSlow(HEAD_ROOM + packed.length)
  own.set(packed, HEAD_ROOM)
  // Right after a pack, msgpackr's current slab is the one `packed` sits in, and nothing but
  // `packed` refers to its bytes from the pack's start (HEAD_ROOM before it) on.
  packr.position = packed.byteOffset - HEAD_ROOM
  return own.subarray(HEAD_ROOM)
}

/**
 * The item frame `[id, [item]]` of one item packItem packed with msgpackr (not a BinItem),
 * made without copying the item: the head goes into the room in front of it. The frame shares
 * msgpackr's slab, which is never rewritten (protocol/msgpack.js), so it may be sent as it is.
 */
export function loneItemFrame (id, packed) {
  const at = itemFrameOverhead(id, 1)
  const out = Buffer.from(packed.buffer, packed.byteOffset - at, at + packed.length)
  writeHead(out, 0, MessageType.STREAM_ITEM)
  out[HEADER_SIZE] = 0x92
  writeArrayHeader(out, writeUint(out, HEADER_SIZE + 1, id), 1)
  return out
}

/** A bin item not yet copied: `length` is its packed size (bin 16 or bin 32 header and the bytes). */
export class BinItem {
  constructor (bytes) {
    this.bytes = bytes
    this.head = bytes.length < 0x10000 ? 3 : 5
    this.length = this.head + bytes.length
  }

  /** Writes the packed item at `at`, as msgpackr would have packed it. */
  writeTo (out, at) {
    const n = this.bytes.length
    if (this.head === 3) { out[at] = 0xc5; out[at + 1] = n >> 8; out[at + 2] = n & 0xff } else { out[at] = 0xc6; out.writeUInt32BE(n, at + 1) }
    out.set(this.bytes, at + this.head)
  }
}

/** Bytes an item frame of `n` items for stream `id` takes besides the items themselves. */
export function itemFrameOverhead (id, n) {
  return HEADER_SIZE + 1 + uintSize(id) + arrayHeaderSize(n)
}

/**
 * Builds a stream's item frames `[id, [item, ...]]` (the same bytes as packing the whole):
 * each item is copied in as it is added, so the caller's bytes are free again at once, and a
 * large Buffer item is copied once in all (see packItem). Items go into a slab after room
 * for the longest head; take() writes the head just before them and cuts the frame out, with
 * no further copy. Slabs start small and double up to `4 x maxFrame`, so a short stream takes
 * little memory and a long one few allocations; a frame pins its slab until ZeroMQ lets go.
 *
 * A bulk item (addBulk, PROTOCOL.md 4.10) is not copied: the frame holds nil in its place and
 * names it in a third field, `[id, [item, ...], [position, ...]]`, and the bytes leave as they
 * are, in frames of their own after it (takeBulk() after take()).
 */
export class ItemFrameBuilder {
  /**
   * @param {number} id        the stream's id
   * @param {number} maxFrame  the largest frame of several items (the producer's maxBatchFrame)
   */
  constructor (id, maxFrame) {
    this.id = id
    this.maxFrame = maxFrame
    this.slab = null
    this.slabSize = 16384
    this.start = 0 //    where the items of the frame being built begin
    this.pos = 0 //      where the next item goes
    this.n = 0 //        items in it
    this.bulk = NO_BULK // bulk items' bytes, in order...
    this.at = NO_BULK //   ...and their positions among the items
    this.bulkBytes = 0
    this.lastBulk = NO_BULK // the bulk frames that follow the frame take() returned last
  }

  /** The bulk frames that follow the frame take() returned last (often none); let go of here. */
  takeBulk () {
    const bulk = this.lastBulk
    this.lastBulk = NO_BULK
    return bulk
  }

  /** Bytes of the items added since the last frame (bulk items' bytes included). */
  get bytes () {
    return this.pos - this.start + this.bulkBytes
  }

  /** Copies a packed item (packItem's) in. */
  add (packed) {
    const len = packed.length
    if (this.slab === null || this.pos + len + TAIL_ROOM > this.slab.length) this.move(len)
    if (packed instanceof BinItem) packed.writeTo(this.slab, this.pos)
    else this.slab.set(packed, this.pos)
    this.pos += len
    this.n++
  }

  /** Adds `bytes` as a bulk item: referred to, not copied (they must not change until sent). */
  addBulk (bytes) {
    if (this.slab === null || this.pos + 1 + TAIL_ROOM > this.slab.length) this.move(1)
    this.slab[this.pos++] = 0xc0 // nil in the item's place
    if (this.bulk === NO_BULK) { this.bulk = []; this.at = [] }
    this.bulk.push(bytes)
    this.at.push(this.n)
    this.bulkBytes += bytes.length
    this.n++
  }

  /** A fresh slab with room for `len` more bytes; the items of the frame begun so far move with it. */
  move (len) {
    const held = this.n > 0 ? this.slab.subarray(this.start, this.pos) : null
    const heldLen = held === null ? 0 : held.length
    this.slabSize = Math.min(this.slabSize * 2, 4 * this.maxFrame)
    const slab = Buffer.allocUnsafeSlow(Math.max(this.slabSize, HEAD_ROOM + heldLen + len + TAIL_ROOM))
    if (held !== null) slab.set(held, HEAD_ROOM)
    this.slab = slab
    this.start = HEAD_ROOM
    this.pos = HEAD_ROOM + heldLen
  }

  /** The frame of the items added since the last one, or null when there are none. */
  take () {
    const n = this.n
    if (n === 0) return null
    const slab = this.slab
    const at = this.start - itemFrameOverhead(this.id, n)
    writeHead(slab, at, MessageType.STREAM_ITEM)
    slab[at + HEADER_SIZE] = this.bulk === NO_BULK ? 0x92 : 0x93
    writeArrayHeader(slab, writeUint(slab, at + HEADER_SIZE + 1, this.id), n)
    let end = this.pos
    if (this.bulk !== NO_BULK) {
      end = writeArrayHeader(slab, end, this.at.length)
      for (let i = 0; i < this.at.length; i++) end = writeUint(slab, end, this.at[i])
    }
    const frame = slab.subarray(at, end)
    this.lastBulk = this.bulk
    this.bulk = NO_BULK
    this.at = NO_BULK
    this.bulkBytes = 0
    this.n = 0
    this.start = end + HEAD_ROOM
    this.pos = this.start
    // A frame never has to move once begun: a slab without room for a whole one is left.
    if (slab.length - this.start < this.maxFrame + TAIL_ROOM) this.slab = null
    return frame
  }
}

/** A STREAM_ITEM frame of `items` (values), for tests and other tools: a producer adds items as they come. */
export function encodeStreamItems (id, items) {
  const b = new ItemFrameBuilder(id, Limits.maxMessageSize)
  for (const v of items) b.add(packItem(v))
  return b.take() ?? frame(MessageType.STREAM_ITEM, [id, []])
}

/** STREAM_CREDIT `[id, items, bytes]`: more credit for the other side; 0 and 0 say "still here". */
export function encodeStreamCredit (id, items, bytes) {
  return frame(MessageType.STREAM_CREDIT, [id, items, bytes])
}

/**
 * STREAM_END `[id, status, value, count]`: the sender's side is over after `count` items.
 * Status OK (value nil) is a normal end; any other is a REPLY status with `[message, code]`.
 */
export function encodeStreamEnd (id, status, value, count) {
  return frame(MessageType.STREAM_END, [id, status, status === Status.OK ? null : value, count])
}

function uintSize (n) {
  return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : n < 0x100000000 ? 5 : 9
}

/** Writes `n` as the shortest MessagePack uint, as msgpackr does; returns the position after it. */
function writeUint (out, at, n) {
  if (n < 0x80) { out[at] = n; return at + 1 }
  if (n < 0x100) { out[at] = 0xcc; out[at + 1] = n; return at + 2 }
  if (n < 0x10000) { out[at] = 0xcd; out.writeUInt16BE(n, at + 1); return at + 3 }
  if (n < 0x100000000) { out[at] = 0xce; out.writeUInt32BE(n, at + 1); return at + 5 }
  out[at] = 0xcb // above 2^32 msgpackr writes a float64, exact for ids up to 2^53-1
  out.writeDoubleBE(n, at + 1)
  return at + 9
}

/** Decodes the body of a stream message of `type` (the header is checked by decode()). */
export function decodeStream (type, body, version, limits, bulk = NO_BULK) {
  if (!Array.isArray(body) || !isUint(body[0])) throw fail('a stream message must start with [id, ...]')
  const id = body[0]
  const maxCreditItems = limits.maxCreditItems ?? Limits.maxCreditItems
  const maxCreditBytes = limits.maxCreditBytes ?? Limits.maxCreditBytes
  switch (type) {
    case MessageType.STREAM_OPEN: {
      if (body.length < 7) throw fail('a stream open must be [id, method, args, timeoutMs, items, bytes, input]')
      const [, method, args, timeoutMs, items, bytes, input] = body
      const maxMethodLength = limits.maxMethodLength ?? Limits.maxMethodLength
      let reason = null
      if (typeof method !== 'string' || method.length === 0 || method.length > maxMethodLength) reason = `method must be a string of 1 to ${maxMethodLength} characters`
      else if (!isUint(timeoutMs)) reason = 'timeoutMs must be a non-negative integer'
      else if (!isUint(items, maxCreditItems) || items === 0) reason = `items must be an integer from 1 to ${maxCreditItems}`
      else if (!isUint(bytes, maxCreditBytes) || bytes === 0) reason = `bytes must be an integer from 1 to ${maxCreditBytes}`
      else if (typeof input !== 'boolean') reason = 'input must be true or false'
      else reason = checkValue(args, limits.maxDepth ?? Limits.maxDepth)
      // accepts (body[8]): bits of Accepts; anything but a uint reads as 0 (items come inline).
      const accepts = body.length > 8 && isUint(body[8], 0xffffffff) ? body[8] : 0
      // headers (body[9], 4.1): a map of strings within limits, or nil; anything else is refused.
      let headers = NO_HEADERS
      if (reason === null && body.length > 9) {
        const h = readHeaders(body[9])
        if (h.reason !== undefined) reason = h.reason
        else headers = h.headers
      }
      return { type, version, id, method, args, timeoutMs, items, bytes, input, trace: traceCarrier(body[7]), bulk: (accepts & Accepts.BULK) !== 0, headers, invalid: reason }
    }
    case MessageType.STREAM_ITEM: {
      const items = checkList(body[1], 'item list', limits.maxBatch ?? Limits.maxBatch)
      const maxDepth = limits.maxDepth ?? Limits.maxDepth
      for (let i = 0; i < items.length; i++) {
        const reason = checkValue(items[i], maxDepth)
        if (reason !== null) throw fail(`stream item: ${reason}`)
      }
      const at = body.length > 2 && body[2] != null ? body[2] : NO_BULK // nil or undefined: no bulk items
      if (!Array.isArray(at) || at.length !== bulk.length) throw fail(`an item frame names ${Array.isArray(at) ? at.length : 'no list of'} bulk items and came with ${bulk.length} bulk frames`)
      const maxMessageSize = limits.maxMessageSize ?? Limits.maxMessageSize
      for (let k = 0; k < at.length; k++) {
        const i = at[k]
        if (!isUint(i, items.length - 1) || (k > 0 && i <= at[k - 1]) || items[i] !== null) throw fail('bulk item positions must rise, each naming a nil item')
        if (!(bulk[k] instanceof Uint8Array) || bulk[k].length > maxMessageSize) throw fail(`bulk frame ${k} must be bytes of at most ${maxMessageSize}`)
        items[i] = bulk[k]
      }
      return { type, version, id, items }
    }
    case MessageType.STREAM_CREDIT:
      if (!isUint(body[1], maxCreditItems) || !isUint(body[2], maxCreditBytes)) {
        throw fail(`a stream credit must be [id, items (0 to ${maxCreditItems}), bytes (0 to ${maxCreditBytes})]`)
      }
      return { type, version, id, items: body[1], bytes: body[2] }
    default: { // STREAM_END
      const status = body[1]; const value = body[2]; const count = body[3]
      if (!isUint(status, 255) || !isUint(count)) throw fail('a stream end must be [id, status, value, count]')
      if (status === Status.OK) return { type, version, id, status, message: null, code: null, count }
      if (!Array.isArray(value) || typeof value[0] !== 'string' || (value[1] != null && typeof value[1] !== 'string')) {
        throw fail('a stream end that is not OK must carry [message, code|nil]')
      }
      const end = { type, version, id, status, message: value[0], code: value[1] ?? null, count }
      if (value.length > 2) end.issues = readIssues(value[2]) // PROTOCOL.md 4.2: a refused input's issues
      return end
    }
  }
}
