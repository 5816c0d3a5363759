// The replies a peer sends (PROTOCOL.md 4.3): each packed once, as its handler finishes.
// Replies for one client that are ready in the same turn of the event loop leave together
// (transport/outbox.js). The reply to a lone request (the only one in its frame, nothing
// waiting for its client) leaves at once, in a frame written around its entry in place (no
// copy): no added latency at low load.
import { Outbox } from '../transport/outbox.js'
import {
  packEntryWithRoom, replyFrame, replyHead, replyRoom, loneReplyFrame, FRAME_OVERHEAD, MAX_ROOM,
} from '../protocol/frames.js'
import { isBulkValue, bulkReplyFrame } from '../protocol/bulk.js'
import { Status, Limits } from '../protocol/constants.js'
import { RemoteCode } from '../protocol/errors.js'

/**
 * A reply whose result left in a bulk frame (PROTOCOL.md 4.2.1), as the duplicates memory is
 * given it to send again (it copies the bytes into its ring, reply-ring.js, and reads back a
 * BulkReply of its own). `length` is its bytes.
 */
export class BulkReply {
  constructor (id, value) {
    this.id = id
    this.value = value
    this.length = value.length
  }
}

const META_ROOM = 32 // bytes a reply frame's meta ({ mv, load }) takes at most

export class ReplyOutbox {
  /**
   * @param {object} o
   * @param {(clientId: Buffer, frames: Buffer[]) => void} o.send  the listener's send
   * @param {() => number} o.mv    the membership digest every reply carries
   * @param {() => number} o.load  this peer's requests in flight (clients balance on it)
   * @param {{ maxMessageSize: number, maxBatch: number }} o.limits
   */
  constructor (o) {
    this.o = o
    this.loneConn = null //  the connection whose lone request runs now (enter() to leave())
    this.head = null //       the packed start of reply frames, see replyHead()
    // A reply of one entry may take this peer's maxMessageSize; several in one frame at most
    // the default limit, which every client accepts (a client with the default limit drops
    // the connection of a larger frame: seen with 4 replies of 1 MB, bench/work/streams.js).
    this.outbox = new Outbox({
      send: (conn, entries) => this.o.send(conn.id, [replyFrame(this.replyHead(), entries)]),
      maxBatch: o.limits.maxBatch,
      maxBytes: Math.min(o.limits.maxMessageSize, Limits.maxMessageSize),
      overhead: FRAME_OVERHEAD + META_ROOM,
    })
  }

  /**
   * The peer runs the `count` requests of one frame from `conn` (connections.js): when that
   * is one and nothing waits for the connection, its reply leaves at once (if its handler
   * returns before leave()).
   */
  enter (conn, count) {
    if (this.outbox.lone(conn, count - 1)) this.loneConn = conn
  }

  leave () {
    this.loneConn = null
  }

  /**
   * Packs a reply entry and sends it; returns the packed entry (to send again as it is:
   * send()). With `bulk` (the request accepts bulk frames), a large binary result goes as it
   * is in a frame of its own, at once, and a BulkReply is returned.
   */
  answer (conn, entry, bulk = false) {
    if (bulk && entry[1] === Status.OK && isBulkValue(entry[2]) && entry[2].length <= this.o.limits.maxMessageSize) {
      const reply = new BulkReply(entry[0], entry[2])
      this.sendBulk(conn, reply)
      return reply
    }
    if (this.loneConn === conn) {
      const head = this.replyHead()
      const room = replyRoom(head)
      if (room <= MAX_ROOM) {
        const out = this.pack(entry, room)
        this.o.send(conn.id, [loneReplyFrame(head, out)])
        return out.subarray(room)
      }
    }
    const packed = this.pack(entry)
    this.send(conn, packed)
    return packed
  }

  /**
   * A reply entry packed, with `room` free bytes in front of it (packEntryWithRoom); a result
   * that cannot be encoded or sent becomes a coded error.
   */
  pack (entry, room = 0) {
    let packed
    try {
      packed = packEntryWithRoom(entry, room)
    } catch (err) {
      packed = packEntryWithRoom([entry[0], Status.REMOTE, [`result could not be encoded: ${err?.message ?? err}`, RemoteCode.ENCODE]], room)
    }
    const max = this.o.limits.maxMessageSize
    const size = packed.length - room
    const fits = max - FRAME_OVERHEAD - META_ROOM // a reply frame's header, meta and list take the rest
    if (size > fits) {
      packed = packEntryWithRoom([entry[0], Status.REMOTE, [`reply of ${size} bytes is larger than the ${fits} bytes a reply may take (maxMessageSize ${max} less ${max - fits} bytes of frame)`, RemoteCode.TOO_LARGE]], room)
    }
    return packed
  }

  /** A BulkReply's two frames, at once (the result is sent without a copy: ZeroMQ holds it until written). */
  sendBulk (conn, reply) {
    this.o.send(conn.id, [bulkReplyFrame(this.replyHead(), reply.id), reply.value])
  }

  /** Queues a packed reply for its connection (at the end of this turn; a lone request's at once). */
  send (conn, packed) {
    if (packed instanceof BulkReply) { this.sendBulk(conn, packed); return }
    if (this.loneConn === conn) {
      this.o.send(conn.id, [replyFrame(this.replyHead(), [packed])])
      return
    }
    this.outbox.add(conn, conn, packed, null)
  }

  /** The start of every reply frame, packed again only when the digest or the load changed. */
  replyHead () {
    const mv = this.o.mv()
    const load = this.o.load()
    let h = this.head
    if (h === null || h.mv !== mv || h.load !== load) this.head = h = { mv, load, bytes: replyHead({ mv, load }) }
    return h.bytes
  }

  /** Sends every reply waiting (at the end of the turn, or early when the peer stops). */
  flush () {
    this.outbox.flush()
  }
}
