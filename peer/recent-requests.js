// Requests this peer ran recently, by client connection and request id, so a request
// delivered twice (a client's retry that comes back to this peer, a hedge) runs once: a
// duplicate of a running request is dropped (the first one's reply answers it), a duplicate
// of a finished one gets the same reply again. Two generations of maps, swapped every half
// window (or when the newer one is full), so remembering costs O(1) and never iterates:
// an id is remembered for between half a window and a whole one.

export class RecentRequests {
  constructor ({ windowMs = 10000, max = 20000, clock }) {
    this.half = windowMs / 2
    this.maxPerGeneration = Math.max(1, Math.floor(max / 2))
    this.clock = clock
    this.current = new Map() // key -> reply entry, or null while running
    this.previous = new Map()
    this.since = clock.now()
  }

  /** `client` is the connection's routing id as a latin1 string (computed once per frame). */
  static key (client, id) {
    return `${client}:${id}`
  }

  rotate () {
    const now = this.clock.now()
    if (now - this.since >= this.half || this.current.size >= this.maxPerGeneration) {
      this.previous = this.current
      this.current = new Map()
      this.since = now
    }
  }

  /** 'new' (run it), 'running' (drop it) or the reply entry to send again. */
  begin (key) {
    this.rotate()
    const seen = this.current.has(key) ? this.current.get(key) : this.previous.get(key)
    if (seen !== undefined) return seen ?? 'running'
    this.current.set(key, null)
    return 'new'
  }

  /** Forgets a request (it was refused, so it may legitimately come back). */
  forget (key) {
    this.current.delete(key)
    this.previous.delete(key)
  }

  finish (key, entry) {
    if (this.current.has(key)) this.current.set(key, entry)
    else if (this.previous.has(key)) this.previous.set(key, entry)
  }
}
