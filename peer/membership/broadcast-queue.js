// Dissemination: membership changes waiting to ride on outgoing messages. Each claim is
// sent a bounded number of times (retransmitMult * ceil(log10(n + 1))), the least-sent
// first and, among those sent as often, the newest first (as memberlist's queue orders by
// transmits, then newest): a refutation or a suspicion queued behind a cold start's hundreds
// of fresh claims still leaves on the next message. A newer claim about a member replaces
// the older one. Messages carry at most `max` claims, so their size is bounded whatever the
// cluster size, and taking them costs O(max) (plus claims replaced since), not O(queue).
// Claims queued as `urgent` (a suspicion, a refutation, a death, a leave: news a member's
// life may hang on) are counted, so membership can push them out between probes.

export class BroadcastQueue {
  constructor ({ retransmitMult }) {
    this.retransmitMult = retransmitMult
    this.items = new Map() // endpoint -> { update, sent, live } of the claim queued about it
    this.levels = [[]] //    levels[s]: items sent s times, oldest first (replaced ones stay, not live, until passed)
    this.urgent = 0 //       live items queued as urgent
  }

  get size () {
    return this.items.size
  }

  enqueue (update, urgent = false) {
    const old = this.items.get(update.endpoint)
    if (old !== undefined) this.drop(old)
    const item = { update, sent: 0, live: true, urgent }
    if (urgent) this.urgent++
    this.items.set(update.endpoint, item)
    const fresh = this.levels[0]
    fresh.push(item)
    // Claims replaced faster than messages leave: the replaced ones go, so memory stays O(members).
    if (fresh.length > 2 * this.items.size + 64) for (let s = 0; s < this.levels.length; s++) this.levels[s] = this.levels[s].filter((i) => i.live)
  }

  drop (item) {
    item.live = false
    if (item.urgent) this.urgent--
  }

  /** Nothing left to send (a converged cluster made at once, in the simulation). */
  clear () {
    this.items.clear()
    this.levels = [[]]
    this.urgent = 0
  }

  /** Up to `max` claims for one message, for a cluster of `n` members. */
  take (n, max) {
    if (this.items.size === 0) return []
    const limit = this.retransmitMult * Math.ceil(Math.log10(n + 1))
    const list = []
    for (let s = 0; s < this.levels.length && list.length < max; s++) {
      const level = this.levels[s]
      if (s >= limit) { // the cluster shrank: these were sent often enough
        for (const item of level) if (item.live) { this.drop(item); this.items.delete(item.update.endpoint) }
        level.length = 0
        continue
      }
      while (level.length > 0 && list.length < max) {
        const item = level.pop() // the newest at this count
        if (item.live) list.push(item)
      }
    }
    const out = []
    for (const item of list) {
      out.push(item.update)
      if (++item.sent >= limit) { this.drop(item); this.items.delete(item.update.endpoint); continue }
      while (this.levels.length <= item.sent) this.levels.push([])
      this.levels[item.sent].push(item)
    }
    return out
  }
}
