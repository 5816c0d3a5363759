// Members reaped while dead, still worth a push-pull now and then: if one was only cut off (a
// partition longer than reapAfter), a sync that gets through brings both sides back together,
// as Serf's reconnect list does on top of memberlist. Left members are never here: they said
// goodbye. Bounded: at most `max` endpoints, each for `ttl` ms, oldest dropped first; they
// are not members, so they are never gossiped, synced about or listed to clients.

export class ReconnectList {
  /** @param {{ max: number, ttl: number }} o */
  constructor ({ max, ttl }) {
    this.max = max
    this.ttl = ttl
    this.map = new Map() // endpoint -> when it was reaped, oldest first
  }

  get size () {
    return this.map.size
  }

  add (endpoint, now) {
    this.map.delete(endpoint)
    this.map.set(endpoint, now)
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value)
  }

  /** It is back (a member again): no need to reconnect. */
  delete (endpoint) {
    this.map.delete(endpoint)
  }

  /** Drops the entries older than `ttl`; returns the endpoints left. */
  endpoints (now) {
    for (const [ep, since] of this.map) {
      if (now - since < this.ttl) break
      this.map.delete(ep)
    }
    return [...this.map.keys()]
  }
}
