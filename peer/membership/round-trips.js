// Probe round trips: the last 256 answered direct probes' times, for the gossip's health in
// peer.stats() and /metrics. A round trip that grows toward the probe timeout says the
// members (or this peer) are slowing down before any of them is suspected.

const KEPT = 256

export class RoundTrips {
  constructor () {
    this.times = new Float64Array(KEPT)
    this.count = 0
  }

  add (ms) {
    this.times[this.count++ % KEPT] = ms
  }

  /** { p50, p99, max } in ms of the round trips kept (nulls before the first). */
  summary () {
    const n = Math.min(this.count, KEPT)
    if (n === 0) return { p50: null, p99: null, max: null }
    const sorted = Array.from(this.times.subarray(0, n)).sort((a, b) => a - b)
    const at = (q) => sorted[Math.min(n - 1, Math.ceil(q * n) - 1)]
    return { p50: at(0.5), p99: at(0.99), max: sorted[n - 1] }
  }
}
