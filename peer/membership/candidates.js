// Candidates: members heard of second-hand (in a request anyone could have sent) that have
// not answered this peer yet. They are not counted alive, not gossiped and not listed to
// clients; membership probes each one directly and admits it once it answers. There are at
// most `max` of them and each expires `ttl` ms after it was first heard of, so a flood of
// made-up endpoints costs bounded memory and a bounded number of probes, and never reaches a
// client.

export class Candidates {
  /** @param {{ max: number, ttl: number }} o */
  constructor ({ max, ttl }) {
    this.max = max
    this.ttl = ttl
    this.map = new Map() // endpoint -> { claim, since, verifying }, in the order first heard of
  }

  get size () {
    return this.map.size
  }

  /**
   * Holds `claim` (the newest one heard, its first-heard time kept). Returns 'added',
   * 'updated', or 'full' when there is no room (the claim is dropped).
   */
  offer (claim, now) {
    const c = this.map.get(claim.endpoint)
    if (c !== undefined) {
      if (claim.incarnation > c.claim.incarnation) c.claim = claim
      return 'updated'
    }
    if (this.map.size >= this.max) return 'full'
    this.map.set(claim.endpoint, { claim, since: now, verifying: false })
    return 'added'
  }

  /** Removes a candidate and returns its claim (it answered, or the table took it over). */
  take (endpoint) {
    const c = this.map.get(endpoint)
    this.map.delete(endpoint)
    return c?.claim
  }

  /** Removes the candidates older than `ttl`; returns their endpoints. */
  expire (now) {
    const out = []
    for (const [ep, c] of this.map) {
      if (now - c.since < this.ttl) break // first heard of in order: the rest are younger
      this.map.delete(ep)
      out.push(ep)
    }
    return out
  }

  /** Candidates with no probe in progress, oldest first, at most `n`; marked as being probed. */
  startVerifying (n) {
    const out = []
    for (const c of this.map.values()) {
      if (out.length >= n) break
      if (c.verifying) continue
      c.verifying = true
      out.push(c)
    }
    return out
  }

  /** A probe of `endpoint` got no answer: it may be tried again. */
  unanswered (endpoint) {
    const c = this.map.get(endpoint)
    if (c !== undefined) c.verifying = false
  }

  get verifying () {
    let n = 0
    for (const c of this.map.values()) if (c.verifying) n++
    return n
  }
}
