// The packed replies of one generation of RecentRequests, copied into large byte chunks: a
// remembered reply is a number (where its bytes are), not an object, so tens of thousands of
// them cost the garbage collector nothing to trace or promote. Bytes are appended, never
// freed one by one: the whole arena goes when its generation is forgotten.

const CHUNK = 64 * 1024 //   bytes per chunk
export const LARGE = CHUNK / 4 // larger replies go to the ReplyRing (reply-ring.js), or, larger than its chunks, are kept as a Buffer of their own

export class ReplyArena {
  constructor () {
    this.chunks = []
    this.offset = CHUNK // in the last chunk; CHUNK: no room, a chunk is needed
    this.bytes = 0 //      of replies appended
  }

  /**
   * Copies `bytes` in; returns the handle read() takes (a number, or a Buffer for large ones).
   * A reply that is not bytes (a BulkReply, reply-outbox.js) is kept as it is.
   */
  append (bytes) {
    this.bytes += bytes.length
    if (!(bytes instanceof Uint8Array)) return bytes
    if (bytes.length > LARGE) return Buffer.from(bytes)
    if (this.offset + 4 + bytes.length > CHUNK) {
      this.chunks.push(Buffer.allocUnsafeSlow(CHUNK))
      this.offset = 0
    }
    const chunk = this.chunks[this.chunks.length - 1]
    const at = this.offset
    chunk.writeUInt32LE(bytes.length, at)
    chunk.set(bytes, at + 4)
    this.offset = at + 4 + bytes.length
    return (this.chunks.length - 1) * CHUNK + at
  }

  /** The bytes append() returned `handle` for (a view, valid while this arena lives). */
  read (handle) {
    if (typeof handle !== 'number') return handle
    const chunk = this.chunks[Math.floor(handle / CHUNK)]
    const at = handle % CHUNK
    return chunk.subarray(at + 4, at + 4 + chunk.readUInt32LE(at))
  }
}
