// An in-memory network for membership tests and simulations: uniquely addressed nodes
// wired to each other, with message loss, delay and partitions, on an injected clock and
// random source. Messages are plain objects; `sizeOf` measures what they would weigh on
// the wire. Each node's requests and their answers are matched as a peer's gossip matches
// them (transport/questions.js: the answer must come from the node asked).
import { Questions } from '../transport/questions.js'

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
    this.nodes = new Map() // endpoint -> { handler(msg) => Promise<reply|null>, questions }
    this.cut = new Set() //   "a|b" pairs that cannot talk (both ways)
    this.traffic = new Map() // endpoint -> { sent, bytes }
    this.lossOf = new Map() // endpoint -> loss of every message to or from it, on top of `loss`
  }

  /** Adds a node; returns its `net` (for Membership) and a `close()`. */
  attach (endpoint, handler) {
    const questions = new Questions({ clock: this.o.clock, send: (to, frames, done) => { done(null); this.carry(endpoint, to, frames[0]) } })
    this.nodes.set(endpoint, { handler, questions })
    this.traffic.set(endpoint, { sent: 0, bytes: 0 })
    return {
      request: (to, msg, timeoutMs) => new Promise((resolve) => questions.ask(to, (seq) => ({ seq, msg }), timeoutMs, resolve)),
      close: () => this.nodes.delete(endpoint), // its questions out end at their timeouts
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

  /** Carries request `seq` from `from` to `to` and its answer back, each one delay, with loss and cuts. */
  carry (from, to, { seq, msg }) {
    const { clock } = this.o
    this.count(from, msg)
    if (!this.passes(from, to)) return
    clock.setTimeout(async () => {
      const node = this.nodes.get(to)
      if (node === undefined) return
      let reply
      try { reply = await node.handler(msg) } catch { reply = null }
      if (reply === null || reply === undefined || this.nodes.get(from)?.questions.pending.has(seq) !== true) return
      this.count(to, reply)
      if (!this.passes(to, from)) return
      clock.setTimeout(() => this.nodes.get(from)?.questions.answer(to, seq, reply), this.delay)
    }, this.delay)
  }
}
