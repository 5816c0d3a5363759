// An in-memory network for membership tests and simulations: uniquely addressed nodes
// wired to each other, with message loss, delay and partitions, on an injected clock and
// random source. Messages are plain objects; `sizeOf` measures what they would weigh on
// the wire.

export class MemoryNetwork {
  /**
   * @param {object} o
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => number} o.random
   * @param {number} [o.loss]      probability that any one message is lost, 0..1
   * @param {number} [o.delay]     one-way delay in ms
   * @param {(msg: object) => number} [o.sizeOf]  bytes of a message, for traffic counts
   */
  constructor (o) {
    this.o = o
    this.loss = o.loss ?? 0
    this.delay = o.delay ?? 1
    this.nodes = new Map() // endpoint -> handler(msg) => Promise<reply|null>
    this.cut = new Set() //   "a|b" pairs that cannot talk (both ways)
    this.traffic = new Map() // endpoint -> { sent, bytes }
    this.lossOf = new Map() // endpoint -> loss of every message to or from it, on top of `loss`
  }

  /** Adds a node; returns its `net` (for Membership) and a `close()`. */
  attach (endpoint, handler) {
    this.nodes.set(endpoint, handler)
    this.traffic.set(endpoint, { sent: 0, bytes: 0 })
    return {
      request: (to, msg, timeoutMs) => this.request(endpoint, to, msg, timeoutMs),
      close: () => this.nodes.delete(endpoint),
    }
  }

  /** Cuts every link between the two groups of endpoints. */
  partition (a, b) {
    for (const x of a) for (const y of b) { this.cut.add(`${x}|${y}`); this.cut.add(`${y}|${x}`) }
  }

  heal () {
    this.cut.clear()
  }

  count (from, msg) {
    const t = this.traffic.get(from)
    if (t === undefined) return
    t.sent++
    if (this.o.sizeOf) t.bytes += this.o.sizeOf(msg)
  }

  /** Whether one message from `from` to `to` gets through. */
  passes (from, to) {
    if (!this.nodes.has(to) || this.cut.has(`${from}|${to}`)) return false
    const loss = 1 - (1 - this.loss) * (1 - (this.lossOf.get(from) ?? 0)) * (1 - (this.lossOf.get(to) ?? 0))
    return loss === 0 || this.o.random() >= loss
  }

  request (from, to, msg, timeoutMs) {
    const { clock } = this.o
    return new Promise((resolve) => {
      let settled = false
      const finish = (v) => { if (!settled) { settled = true; clock.clearTimeout(timer); resolve(v) } }
      const timer = clock.setTimeout(() => finish(null), timeoutMs)
      this.count(from, msg)
      if (!this.passes(from, to)) return
      clock.setTimeout(async () => {
        const handler = this.nodes.get(to)
        if (handler === undefined) return
        let reply
        try { reply = await handler(msg) } catch { reply = null }
        if (reply === null || reply === undefined || settled) return
        this.count(to, reply)
        if (!this.passes(to, from)) return
        clock.setTimeout(() => finish(reply), this.delay)
      }, this.delay)
    })
  }
}
