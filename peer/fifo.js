// A first-in first-out queue over a ring of slots that grows by doubling and clears each slot
// it gives out. An array used as a queue (push, shift) keeps reallocating its storage as
// shift trims the front and push grows the back; a dead copy of that storage in the old
// generation goes on pointing at queued requests, and each young collection then copies and
// promotes them (runtime/id-table.js tells the same story of a Map). Measured on a peer
// with worker threads at 256 in flight: scavenges of 3.3 ms on average with an array,
// bench/RESULTS.md ("The tail") has the figures with this queue.

export class Fifo {
  constructor (capacity = 64) {
    this.slots = new Array(capacity).fill(undefined)
    this.head = 0 // the slot of the first item
    this.length = 0
  }

  push (item) {
    if (this.length === this.slots.length) this.grow()
    this.slots[(this.head + this.length) % this.slots.length] = item
    this.length++
  }

  /** Puts `items` back in front, in their order (the first of them becomes the first). */
  unshiftAll (items) {
    for (let i = items.length - 1; i >= 0; i--) {
      if (this.length === this.slots.length) this.grow()
      this.head = (this.head - 1 + this.slots.length) % this.slots.length
      this.slots[this.head] = items[i]
      this.length++
    }
  }

  /** Takes the first item; undefined when empty. */
  shift () {
    if (this.length === 0) return undefined
    const item = this.slots[this.head]
    this.slots[this.head] = undefined
    this.head = (this.head + 1) % this.slots.length
    this.length--
    return item
  }

  /** Takes every item, in order. */
  drain () {
    const out = []
    while (this.length > 0) out.push(this.shift())
    return out
  }

  grow () {
    const old = this.slots
    const slots = new Array(old.length * 2).fill(undefined)
    for (let i = 0; i < this.length; i++) slots[i] = old[(this.head + i) % old.length]
    old.fill(undefined) // it may be in the old generation: it must not hold requests alive
    this.slots = slots
    this.head = 0
  }
}
