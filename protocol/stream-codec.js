// Encode and decode the stream messages (PROTOCOL.md 4.10): STREAM_OPEN, STREAM_ITEM,
// STREAM_CREDIT and STREAM_END. A stream's items are packed one by one as they come (a
// producer checks each against its credit) and joined into an item frame without being packed
// again, as request entries are.
import { HEADER_SIZE, MessageType, Status, Limits } from './constants.js'
import { checkValue, checkList, isUint, fail } from './validate.js'
import { packr, frame, writeHead, writeArrayHeader, arrayHeaderSize } from './msgpack.js'

export const STREAM_TYPES = new Set([MessageType.STREAM_OPEN, MessageType.STREAM_ITEM, MessageType.STREAM_CREDIT, MessageType.STREAM_END])

/**
 * A STREAM_OPEN frame: `[id, method, args, timeoutMs, items, bytes, input]`. `items` and
 * `bytes` are the first credit the client grants; `input` says the client will send items too.
 */
export function encodeStreamOpen (id, method, args, timeoutMs, items, bytes, input) {
  return frame(MessageType.STREAM_OPEN, [id, method, args, timeoutMs, items, bytes, input])
}

/** One item packed on its own, to be joined into an item frame by streamItemFrame. */
export function packItem (value) {
  return packr.pack(value)
}

/** Bytes an item frame of `n` items for stream `id` takes besides the items themselves. */
export function itemFrameOverhead (id, n) {
  return HEADER_SIZE + 1 + uintSize(id) + arrayHeaderSize(n)
}

/** A STREAM_ITEM frame `[id, [item, ...]]` from items packed with packItem: the same bytes as packing the whole. */
export function streamItemFrame (id, packed) {
  const n = packed.length
  let size = itemFrameOverhead(id, n)
  for (let i = 0; i < n; i++) size += packed[i].length
  const out = Buffer.allocUnsafe(size)
  writeHead(out, 0, MessageType.STREAM_ITEM)
  out[HEADER_SIZE] = 0x92
  let at = writeUint(out, HEADER_SIZE + 1, id)
  at = writeArrayHeader(out, at, n)
  for (let i = 0; i < n; i++) { out.set(packed[i], at); at += packed[i].length }
  return out
}

/** A STREAM_ITEM frame of `items` (values), for tests and other tools: a producer packs items as they come. */
export function encodeStreamItems (id, items) {
  return streamItemFrame(id, items.map(packItem))
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
export function decodeStream (type, body, version, limits) {
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
      return { type, version, id, method, args, timeoutMs, items, bytes, input, invalid: reason }
    }
    case MessageType.STREAM_ITEM: {
      const items = checkList(body[1], 'item list', limits.maxBatch ?? Limits.maxBatch)
      const maxDepth = limits.maxDepth ?? Limits.maxDepth
      for (let i = 0; i < items.length; i++) {
        const reason = checkValue(items[i], maxDepth)
        if (reason !== null) throw fail(`stream item: ${reason}`)
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
      return { type, version, id, status, message: value[0], code: value[1] ?? null, count }
    }
  }
}
