// Frames joined from entries packed one at a time, for coalescing (the client's requests, a
// peer's replies): each entry is packed once, as it comes, and a frame is written around
// entries already packed, or around a lone entry in place (no copy). The bytes are those
// codec.js's encodeRequest and encodeReply give for the same entries.
import { HEADER_SIZE, MessageType } from './constants.js'
import { packr, unpackr, writeHead, writeArrayHeader, arrayHeaderSize, RESERVE_START_SPACE } from './msgpack.js'

/**
 * One request or reply entry packed on its own, so entries can be packed as they come and
 * joined into one frame later (coalescing) without packing anything twice.
 */
export function packEntry (entry) {
  return packr.pack(entry)
}

/**
 * An entry packed with `room` bytes left free in front of it (0 to MAX_ROOM), so a frame of
 * this one entry can be finished in place: see loneReplyFrame. (A lone request needs no such
 * thing: encodeRequest([entry]) packs its frame in one go.)
 */
export function packEntryWithRoom (entry, room) {
  if (entry[2] instanceof Packed) return packedEntry(entry, room)
  return room === 0 ? packr.pack(entry) : packr.pack(entry, RESERVE_START_SPACE | room)
}

/**
 * A MessagePack value encoded already (by a worker thread, with packValue), to be written
 * into a reply entry as its bytes are: the thread encodes its result, the main thread only
 * copies it into the frame.
 */
export class Packed {
  constructor (bytes) {
    this.bytes = bytes
  }
}

/** A value as MessagePack bytes, for a Packed elsewhere (a view of a shared slab: copy it before the next pack). */
export function packValue (value) {
  return packr.pack(value)
}

/** A value from MessagePack bytes, with the settings every frame is decoded with (no limits checked: for benchmarks and tests). */
export function unpackValue (bytes) {
  return unpackr.unpack(bytes)
}

/** [id, status, value] whose value is Packed: the same bytes as packEntryWithRoom would give for the value itself. */
function packedEntry (entry, room) {
  const head = packr.pack([entry[0], entry[1]]) // fixarray of 2: made one of 3 below
  const value = entry[2].bytes
  const out = Buffer.allocUnsafe(room + head.length + value.length)
  out.set(head, room)
  out[room] = 0x93
  out.set(value, room + head.length)
  return out
}

/** The most room packEntryWithRoom can leave in front of an entry. */
export const MAX_ROOM = 0xff

/** The room loneReplyFrame needs in front of its entry, for a replyHead() of `head`. */
export function replyRoom (head) {
  return HEADER_SIZE + head.length + 1
}

/**
 * A REPLY frame of one entry, written around it in place: `packed` is
 * packEntryWithRoom(entry, replyRoom(head)) and `head` a replyHead(). The same bytes as
 * replyFrame(head, [entry packed]), with no copy.
 */
export function loneReplyFrame (head, packed) {
  writeHead(packed, 0, MessageType.REPLY)
  packed.set(head, HEADER_SIZE)
  packed[HEADER_SIZE + head.length] = 0x91 // [entry]
  return packed
}

/** `prefix` bytes are left for the caller; then the array header and the entries. */
function joinEntries (type, prefix, packed) {
  const n = packed.length
  let size = HEADER_SIZE + prefix.length + arrayHeaderSize(n)
  for (let i = 0; i < n; i++) size += packed[i].length
  const out = Buffer.allocUnsafe(size)
  writeHead(out, 0, type)
  out.set(prefix, HEADER_SIZE)
  let at = writeArrayHeader(out, HEADER_SIZE + prefix.length, n)
  for (let i = 0; i < n; i++) { out.set(packed[i], at); at += packed[i].length }
  return out
}

const NO_PREFIX = Buffer.alloc(0)


/** A REQUEST frame from entries packed with packEntry: the same bytes as encodeRequest. */
export function requestFrame (packed) {
  return joinEntries(MessageType.REQUEST, NO_PREFIX, packed)
}

/** A frame of `type` whose body is the array of entries packed with packEntry (an EVENT frame: event-codec.js). */
export function entriesFrame (type, packed) {
  return joinEntries(type, NO_PREFIX, packed)
}

/** The bytes of a REPLY body before its entries: `[meta, ` (reusable while meta is the same). */
export function replyHead (meta) {
  const m = packr.pack(meta)
  const head = Buffer.allocUnsafe(1 + m.length)
  head[0] = 0x92 // [meta, entries]
  head.set(m, 1)
  return head
}

/**
 * A REPLY frame from entries packed with packEntry: the same bytes as encodeReply. `meta` is
 * the meta map, or its replyHead().
 */
export function replyFrame (meta, packed) {
  return joinEntries(MessageType.REPLY, Buffer.isBuffer(meta) ? meta : replyHead(meta), packed)
}

/** Bytes a frame takes besides its entries (header, array header); a reply adds its meta. */
export const FRAME_OVERHEAD = HEADER_SIZE + 5
