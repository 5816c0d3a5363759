// Coalescing, for both directions: the client's requests to a peer and the peer's replies to a
// client. Packed entries for one destination that are ready in the same turn of the event
// loop leave together at the end of the turn (setImmediate), in as few frames as the count
// and size limits allow. The speed rules live here, once:
// - The lone path: an entry with nothing waiting for its destination, no held turn and
//   nothing else expected (lone()) does not come here at all: its owner packs it as its whole
//   frame and sends it at once, so low load pays no added latency.
// - The held turn: a frame of several answers wakes several callers, whose next entries come
//   in this turn. hold() keeps the lone path shut for that destination until the turn ends,
//   so they leave in one frame instead of the first alone and the rest after, every round.
// - The early flush: once half the entries in flight to a destination wait here (and at
//   least EARLY_FLUSH), they leave before the turn ends, so the far end works on them while
//   this end makes the rest: the two ends overlap instead of taking turns.
// Frames are built and sent by the owner (send), which knows the codec and the socket.

export const EARLY_FLUSH = 32

class Box {
  constructor (dest) {
    this.dest = dest
    this.entries = [] // packed entries waiting, in order...
    this.tags = [] //    ...and what each belongs to (the client's calls; nothing for replies)
    this.held = false // hold(): no lone entry for this destination until the turn ends
  }
}

export class Outbox {
  /**
   * @param {object} o
   * @param {(dest: any, entries: Buffer[], tags: any[]) => void} o.send  sends one frame of these entries
   * @param {number} o.maxBatch  entries per frame at most
   * @param {number} o.maxBytes  bytes per frame at most (a lone entry over it still goes alone)
   * @param {number} o.overhead  bytes a frame adds to its entries
   * @param {(tag: any, dest: any) => boolean} [o.keep]  whether a waiting entry still goes when it is its turn
   * @param {boolean} [o.early]  flush early under load (the client's requests; see above)
   */
  constructor (o) {
    this.o = o
    this.boxes = new Map() // key -> Box, while it has entries waiting or a held turn
    this.queued = false //    a flush of every box is queued for the end of this turn
    this.flushAll = () => { this.queued = false; this.flush() }
  }

  /** Whether an entry for `key` may leave at once, alone: nothing waits, no held turn, `others` is 0 (nothing else in flight or in the same frame). */
  lone (key, others) {
    return others === 0 && !this.boxes.has(key)
  }

  /** Whether entries for `key` wait for the end of this turn. */
  waiting (key) {
    return this.boxes.has(key)
  }

  /**
   * Queues a packed entry for `dest` (known as `key`) until the end of this turn. `inflight`:
   * the entries out to that destination with no answer yet, for the early flush.
   */
  add (key, dest, packed, tag, inflight = 0) {
    const box = this.box(key, dest)
    box.entries.push(packed)
    box.tags.push(tag)
    if (this.o.early && box.entries.length >= Math.max(EARLY_FLUSH, inflight >> 1)) this.send(box)
  }

  /** A frame of several answers came from `dest`: its callers' next entries wait for the end of this turn. */
  hold (key, dest) {
    this.box(key, dest).held = true
  }

  box (key, dest) {
    let box = this.boxes.get(key)
    if (box === undefined) {
      this.boxes.set(key, box = new Box(dest))
      if (!this.queued) { this.queued = true; setImmediate(this.flushAll) }
    }
    return box
  }

  /** Sends everything waiting now (at the end of the turn, or early when the owner stops). */
  flush () {
    if (this.boxes.size === 0) return
    const boxes = this.boxes
    this.boxes = new Map()
    for (const box of boxes.values()) this.send(box)
  }

  /** Sends one destination's entries, in as many frames as the limits need. */
  send (box) {
    const { entries, tags } = box
    if (entries.length === 0) return
    box.entries = []
    box.tags = []
    const { maxBatch, maxBytes, overhead, keep } = this.o
    let batch = []; let owners = []; let bytes = overhead
    for (let i = 0; i < entries.length; i++) {
      const packed = entries[i]
      if (keep !== undefined && !keep(tags[i], box.dest)) continue // e.g. a call aborted or moved on before it left
      if (batch.length > 0 && (batch.length >= maxBatch || bytes + packed.length > maxBytes)) {
        this.o.send(box.dest, batch, owners)
        batch = []; owners = []; bytes = overhead
      }
      batch.push(packed); owners.push(tags[i]); bytes += packed.length
    }
    if (batch.length > 0) this.o.send(box.dest, batch, owners)
  }
}
