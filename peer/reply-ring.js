// The large replies the duplicates memory keeps (recent-requests.js), copied into a ring of
// 1 MiB chunks that are written over in turn, not into buffers of their own: a peer answering
// large values at a high rate would otherwise hand V8 a stream of large ArrayBuffers that live
// a few tens of milliseconds, long enough to be promoted, and V8 then runs a full collection
// every few hundred requests (bench/RESULTS.md, "Bulk frames"). A reply is a number (its
// position); one written over is forgotten, as a duplicates memory under load forgets (its
// duplicate runs again). The chunks are given back after a generation that wrote none.
import { BulkReply } from './reply-outbox.js'

const CHUNK = 1024 * 1024
const HEAD = 13 // u32 length, u8 kind, f64 id
const PACKED = 0 // a packed reply entry, sent again as it is
const BULK = 1 //   a bulk frame's bytes, sent again as a BulkReply

export class ReplyRing {
  /** @param {number} capacity  bytes (whole chunks, at least one) */
  constructor (capacity) {
    this.chunkCount = Math.max(1, Math.floor(capacity / CHUNK))
    this.capacity = this.chunkCount * CHUNK
    this.chunks = [] //   allocated as the ring first reaches them
    this.written = 0 //   bytes written since the ring began (a position: never goes back)
  }

  /** Whether a reply of `length` bytes fits a chunk (a larger one is not kept here). */
  fits (length) {
    return length + HEAD <= CHUNK
  }

  /** Copies a packed entry (bytes) or a BulkReply in; returns its position. */
  append (reply) {
    const bulk = !(reply instanceof Uint8Array)
    const bytes = bulk ? reply.value : reply
    let at = this.written % CHUNK
    if (at + HEAD + bytes.length > CHUNK) { this.written += CHUNK - at; at = 0 } // to the next chunk
    const index = Math.floor(this.written / CHUNK) % this.chunkCount
    const chunk = this.chunks[index] ?? (this.chunks[index] = Buffer.allocUnsafeSlow(CHUNK))
    chunk.writeUInt32LE(bytes.length, at)
    chunk[at + 4] = bulk ? BULK : PACKED
    chunk.writeDoubleLE(bulk ? reply.id : 0, at + 5)
    chunk.set(bytes, at + HEAD)
    const position = this.written
    this.written += HEAD + bytes.length
    return position
  }

  /**
   * The reply at `position`, copied out (ZeroMQ may still be sending it when the ring writes
   * over it): bytes or a BulkReply; null when it was written over.
   */
  read (position) {
    if (this.written > position + this.capacity) return null
    const chunk = this.chunks[Math.floor(position / CHUNK) % this.chunkCount]
    if (chunk === undefined) return null // given back (release)
    const at = position % CHUNK
    const bytes = Buffer.from(chunk.subarray(at + HEAD, at + HEAD + chunk.readUInt32LE(at)))
    return chunk[at + 4] === BULK ? new BulkReply(chunk.readDoubleLE(at + 5), bytes) : bytes
  }

  /** Gives the chunks back to the garbage collector; every position written so far reads null. */
  release () {
    this.chunks = []
    this.written += this.capacity + CHUNK
  }
}
