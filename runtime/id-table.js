// Requests in flight by id (the client's calls; a peer's running requests per connection):
// a hash table of items that carry their own key and chain link (by default the fields `id`
// and `idNext`), over one bucket array allocated once and reused, where a Map would do for a
// table of integer keys that come and go in order.
//
// Why not a Map: under steady traffic a Map's table fills with deleted entries and is
// rebuilt every few hundred requests, and each table it leaves behind keeps a link to the
// next one and its old entries (V8 keeps them for live iterators). A table that was
// promoted to the old generation while live goes on holding the calls it knew, and the
// next table, after it is dead, until a full collection: each young collection then copies
// and promotes megabytes of finished requests. Measured at 256 in flight
// (measured with the client alone on an in-memory transport): 2.4 MB survived each scavenge, and pauses of 6-8 ms, with a Map;
// a tenth of that with this table (bench/results/earlier.md, "The tail").
//
// Ids are integers from 0 to 2^53-1, mostly handed out in order, so `id mod capacity`
// spreads them evenly and chains stay one or two long. An item is in one table at a time, and its link
// is cleared when it leaves, so a finished request points at nothing.

const MIN_CAPACITY = 1024

export class IdTable {
  /**
   * @param {{ capacity?: number, key?: string, link?: string }} [o]  the item fields that
   *   hold its id and its link in the table's chains
   */
  constructor ({ capacity = MIN_CAPACITY, key = 'id', link = 'idNext' } = {}) {
    this.key = key
    this.link = link
    this.capacity = 2 ** Math.ceil(Math.log2(Math.max(16, capacity)))
    this.buckets = new Array(this.capacity).fill(null)
    this.size = 0
  }

  bucketOf (id) {
    return id % this.capacity
  }

  /** The item with this id, or undefined (for any id, whatever a peer sent). */
  get (id) {
    if (typeof id !== 'number') return undefined
    for (let item = this.buckets[this.bucketOf(id)] ?? null; item !== null; item = item[this.link]) {
      if (item[this.key] === id) return item
    }
    return undefined
  }

  /** Adds an item whose id is not in the table (an integer from 1 to 2^53-1). */
  add (item) {
    const b = this.bucketOf(item[this.key])
    item[this.link] = this.buckets[b]
    this.buckets[b] = item
    if (++this.size > this.capacity) this.grow()
  }

  /** Removes an item; false when it was not in the table. */
  delete (item) {
    const b = this.bucketOf(item[this.key])
    let prev = null
    for (let at = this.buckets[b] ?? null; at !== null; prev = at, at = at[this.link]) {
      if (at !== item) continue
      if (prev === null) this.buckets[b] = item[this.link]
      else prev[this.link] = item[this.link]
      item[this.link] = null
      this.size--
      return true
    }
    return false
  }

  /** The items, in no particular order (a new array). */
  values () {
    const out = []
    for (let b = 0; b < this.capacity; b++) {
      for (let item = this.buckets[b]; item !== null; item = item[this.link]) out.push(item)
    }
    return out
  }

  grow () {
    const items = this.values()
    this.buckets.fill(null) // the old array may be in the old generation: it must not hold calls alive
    this.capacity *= 2
    this.buckets = new Array(this.capacity).fill(null)
    this.size = 0
    for (const item of items) this.add(item)
  }
}
