// How many durable events a peer asks JetStream for: what its free places allow (the same
// places that bound its requests, peer/durable-host.js), less what it asked for and has not
// received yet, and at most `maxInflight` of its own. A peer that is full asks for nothing, so
// a busy peer is not handed events it cannot run and its group's other peers take them; a new
// peer asks at once. Places freed by the peer's durable events wake the pulls at once; places
// freed by other work (requests) are seen within POLL_MS.
const POLL_MS = 50

export class PullBudget {
  /**
   * @param {object} o
   * @param {() => number} o.free  the peer's free places now
   * @param {number|null} o.maxInflight
   */
  constructor ({ free, maxInflight }) {
    this.free = free
    this.max = maxInflight ?? Infinity
    this.running = 0 // events handed to the peer and not settled
    this.asked = 0 //   asked for in pulls still open, not received
    this.waiters = []
    this.timer = null
    this.idlers = [] // resolvers of idle()
  }

  /** Resolves once no event handed to the peer is left unsettled. */
  idle () {
    if (this.running === 0) return Promise.resolve()
    return new Promise((resolve) => this.idlers.push(resolve))
  }

  /** What may be asked for now. */
  room () {
    return Math.max(0, Math.min(this.free() - this.asked, this.max - this.running - this.asked))
  }

  /** Resolves once room() > 0 (or `stopped()` says so). */
  wait (stopped) {
    if (this.room() > 0 || stopped()) return Promise.resolve()
    return new Promise((resolve) => {
      this.waiters.push({ resolve, stopped })
      this.poll()
    })
  }

  poll () {
    if (this.timer !== null) return
    this.timer = setTimeout(() => { this.timer = null; this.wake() }, POLL_MS)
  }

  wake () {
    const room = this.room()
    const keep = []
    for (const w of this.waiters) (room > 0 || w.stopped() ? w.resolve() : keep.push(w))
    this.waiters = keep
    if (keep.length > 0) this.poll()
  }

  /** Claims up to `share` of the room for a pull: how many it may ask for (0: none). */
  claim (share) {
    const n = Math.min(this.room(), Math.max(1, share))
    this.asked += n
    return n
  }

  /** A pull's event arrived: asked becomes running. */
  arrived () {
    this.asked--
    this.running++
  }

  /** A pull ended with `n` of its claim never received. */
  unclaim (n) {
    this.asked -= n
    this.wake()
  }

  /** An event handed to the peer settled (acked, naked, dead-lettered). */
  settled () {
    this.running--
    if (this.running === 0) for (const resolve of this.idlers.splice(0)) resolve()
    this.wake()
  }

  stop () {
    clearTimeout(this.timer)
    this.timer = null
    this.wake()
  }
}
