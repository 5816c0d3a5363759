// The receiving side of a stream (PROTOCOL.md 4.10): holds the items that arrived until they
// are read, and grants credit back as they are read, so the sender never has more in flight
// and waiting here than the window: at most `items` items and about `bytes` bytes (plus one
// frame's overdraw). Credit goes back in steps of half the window, so a fast reader costs one
// credit message per half window, not one per item. A frame beyond the credit is a violation
// of the protocol: receive() says so and takes nothing.
export class StreamConsumer {
  /**
   * @param {object} o
   * @param {number} o.items  the window, in items...
   * @param {number} o.bytes  ...and in bytes (both granted at the open)
   * @param {(items: number, bytes: number) => void} o.grant  sends the sender more credit
   * @param {() => void} [o.onRead]  an item was handed to the reader
   */
  constructor (o) {
    this.window = { items: o.items, bytes: o.bytes }
    this.credit = { items: o.items, bytes: o.bytes } // what the sender may still send
    this.grantFn = o.grant
    this.onRead = o.onRead ?? null
    this.queue = [] // value, bytes, value, bytes, ...
    this.head = 0
    this.readItems = 0 // read since the last grant...
    this.readBytes = 0 // ...and their bytes
    this.received = 0 // items that arrived
    this.read = 0 //     items handed to the reader
    this.ended = false
    this.abandoned = false // the reader left (abandon): what still arrives is dropped
    this.error = null
    this.waiters = [] // [resolve, reject] of next() calls waiting for an item
  }

  /** Items waiting to be read. */
  get buffered () {
    return (this.queue.length - this.head) >> 1
  }

  /**
   * An item frame of `bytes` bytes arrived with `items`. Returns null, or why it breaks the
   * credit rule (nothing is taken then).
   */
  receive (items, bytes) {
    if (this.abandoned) return null // the reader left: items the sender sent before it knew are dropped
    if (this.ended) return 'items after the end of the stream'
    if (items.length > this.credit.items) return `${items.length} items with credit for ${this.credit.items}`
    if (this.credit.bytes <= 0) return `a frame of ${bytes} bytes with no byte credit left (${this.credit.bytes})`
    this.credit.items -= items.length
    this.credit.bytes -= bytes
    this.received += items.length
    const share = Math.floor(bytes / items.length)
    let rest = bytes - share * items.length
    for (let i = 0; i < items.length; i++) {
      if (this.waiters.length > 0) { this.hand(items[i], share + rest); rest = 0; continue }
      this.queue.push(items[i], share + rest)
      rest = 0
    }
    return null
  }

  /** The sender's side is over: `err` null for a normal end. Items already here are still read first. */
  end (err) {
    if (this.ended) return
    this.ended = true
    this.error = err
    if (this.buffered === 0) this.settleWaiters()
  }

  /** Ends at once, dropping what was not read (the reader went away, or the stream failed for good). */
  abandon (err) {
    this.abandoned = true
    this.queue = []
    this.head = 0
    this.ended = true
    this.error = err
    this.settleWaiters()
  }

  settleWaiters () {
    const w = this.waiters
    this.waiters = []
    for (const [resolve, reject] of w) {
      if (this.error === null) resolve({ value: undefined, done: true })
      else reject(this.error)
    }
  }

  /** The next item: { value, done } as an async iterator gives it. */
  next () {
    if (this.head < this.queue.length) {
      const value = this.queue[this.head]
      const bytes = this.queue[this.head + 1]
      this.queue[this.head] = undefined
      this.head += 2
      if (this.head >= 1024 && this.head * 2 >= this.queue.length) { this.queue = this.queue.slice(this.head); this.head = 0 }
      this.taken(bytes)
      if (this.ended && this.buffered === 0) queueMicrotask(() => this.settleWaiters())
      return Promise.resolve({ value, done: false })
    }
    if (this.ended) return this.error === null ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.error)
    return new Promise((resolve, reject) => { this.waiters.push([resolve, reject]) })
  }

  hand (value, bytes) {
    const [resolve] = this.waiters.shift()
    this.taken(bytes)
    resolve({ value, done: false })
  }

  /** An item was read: credit goes back once half the window (items or bytes) was read. */
  taken (bytes) {
    this.read++
    this.readItems++
    this.readBytes += bytes
    this.onRead?.()
    if (this.ended) return
    if (this.readItems * 2 >= this.window.items || this.readBytes * 2 >= this.window.bytes) {
      const items = this.readItems
      const b = this.readBytes
      this.readItems = 0
      this.readBytes = 0
      this.credit.items += items
      this.credit.bytes += b
      this.grantFn(items, b)
    }
  }
}
