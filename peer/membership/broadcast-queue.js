// Dissemination: membership changes waiting to ride on outgoing messages. Each claim is
// sent a bounded number of times (retransmitMult * ceil(log10(n + 1))), the least-sent
// first, and a newer claim about a member replaces the older one. Messages carry at most
// `max` claims, so their size is bounded whatever the cluster size.

export class BroadcastQueue {
  constructor ({ retransmitMult }) {
    this.retransmitMult = retransmitMult
    this.items = new Map() // endpoint -> { update, sent }
  }

  get size () {
    return this.items.size
  }

  enqueue (update) {
    this.items.set(update.endpoint, { update, sent: 0 })
  }

  /** Up to `max` claims for one message, for a cluster of `n` members. */
  take (n, max) {
    if (this.items.size === 0) return []
    const limit = this.retransmitMult * Math.ceil(Math.log10(n + 1))
    // The `max` least sent, in the order they were queued within each count: counts are small
    // (below `limit`), so a pass per count, not a sort of the whole queue for every message
    // (at 1,000 members, while a partition's claims wait, the sort was a tenth of the CPU).
    const list = []
    for (let sent = 0; list.length < max && sent <= limit; sent++) {
      for (const item of this.items.values()) {
        if (item.sent !== sent) continue
        list.push(item)
        if (list.length === max) break
      }
    }
    const out = []
    for (const item of list) {
      out.push(item.update)
      if (++item.sent >= limit) this.items.delete(item.update.endpoint)
    }
    return out
  }
}
