// Bulk frames (PROTOCOL.md 4.2.1): a large binary result travels in a ZeroMQ frame of its own
// after its REPLY frame, sent as the handler made it, where packing it would copy it into the
// frame (and give the garbage collector a second large buffer to account for:
// bench/results/earlier.md, "Bulk frames"). The decoding side is decodeReply (codec.js).
import { Status, BULK_MIN_BYTES } from './constants.js'
import { loneReplyFrame, replyRoom, MAX_ROOM, replyFrame } from './frames.js'
import { packr, RESERVE_START_SPACE } from './msgpack.js'

/**
 * Whether `value`, a handler's result, goes in a bulk frame of its own when the request
 * accepts one: a Buffer or plain Uint8Array of at least BULK_MIN_BYTES.
 */
export function isBulkValue (value) {
  return value instanceof Uint8Array && value.length >= BULK_MIN_BYTES && (value.constructor === Buffer || value.constructor === Uint8Array)
}

/**
 * The REPLY frame of one OK entry whose result is its message's bulk frame 0, `[meta,
 * [[id, 0, nil, 0]]]`, for a replyHead() `head`; the result follows it as a frame of its own.
 */
export function bulkReplyFrame (head, id) {
  const room = replyRoom(head)
  if (room > MAX_ROOM) return replyFrame(head, [packr.pack([id, Status.OK, null, 0])])
  return loneReplyFrame(head, packr.pack([id, Status.OK, null, 0], RESERVE_START_SPACE | room))
}
