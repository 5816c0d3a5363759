// Requests this peer ran recently, by client connection and request id, so a request
// delivered twice (a client's retry that comes back to this peer, a hedge) runs once: a
// duplicate of a running request is dropped (the first one's reply answers it), a duplicate
// of a finished one gets the same reply again. Bounded in time and in count.

export class RecentRequests {
  constructor ({ windowMs = 10000, max = 20000, clock }) {
    this.windowMs = windowMs
    this.max = max
    this.clock = clock
    this.map = new Map() // key -> { at, entry }; insertion order = age
  }

  static key (clientId, id) {
    return `${clientId.toString('latin1')}:${id}`
  }

  /** 'new' (run it), 'running' (drop it) or the reply entry to send again. */
  begin (key) {
    const now = this.clock.now()
    this.expire(now)
    const seen = this.map.get(key)
    if (seen !== undefined) return seen.entry ?? 'running'
    this.map.set(key, { at: now, entry: null })
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value)
    return 'new'
  }

  /** Forgets a request (it was refused, so it may legitimately come back). */
  forget (key) {
    this.map.delete(key)
  }

  finish (key, entry) {
    const seen = this.map.get(key)
    if (seen !== undefined) seen.entry = entry
  }

  expire (now) {
    for (const [k, v] of this.map) {
      if (now - v.at < this.windowMs) break
      this.map.delete(k)
    }
  }
}
