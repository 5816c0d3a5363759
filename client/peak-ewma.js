// A peak-sensitive moving average of latency (Finagle's "peak EWMA"), one per peer: a sample
// above the estimate replaces it at once; a lower one pulls it down with a weight that grows
// with the time since the last sample, and is at least MIN_WEIGHT, so a peer picked often
// still forgets one slow answer within a few (Finagle's pure time weight lets a busy peer
// carry it for the whole decay time, and lose its share of traffic meanwhile). The estimate
// decays towards zero as it is read (Finagle reads it as a sample of 0), so a peer that is
// not picked becomes cheap and is tried again. An estimate is stale, says nothing of the peer
// as it is now, and is replaced by the next sample:
//   - with no sample for `staleMs`;
//   - with no sample while `staleSamples` were taken of the other peers (`samples`, a count
//     they share): time alone forgot too slowly at sub-millisecond latencies, where a run of
//     serial requests is over before an estimate from its start goes stale;
//   - when it is a fresh connection's first (fresh()): that answer is often slow (code not
//     compiled yet on either side: 6 ms where the next ones take 0.05), and taken as the
//     estimate it kept its peer out of serial traffic until it went stale (as Finagle treats a
//     fresh connection's first samples apart).

const MIN_WEIGHT = 0.2 // of a lower sample, however soon after the last one

export class PeakEwma {
  /**
   * @param {number} decayMs  the estimate forgets over about this long
   * @param {number} staleMs  after this long without a sample the estimate is stale
   * @param {{ n: number }|null} samples  samples taken of every peer (a count the estimates share)...
   * @param {number} staleSamples  ...of which this many without one of this peer make it stale
   */
  constructor (decayMs, staleMs = Infinity, samples = null, staleSamples = Infinity) {
    this.decayMs = decayMs
    this.staleMs = staleMs
    this.samples = samples
    this.staleSamples = staleSamples
    this.value = null
    this.stamp = 0
    this.seq = 0 //             samples.n at its last sample
    this.first = false //       the next sample is a fresh connection's first...
    this.provisional = false // ...and the estimate is one: stale, the next sample replaces it
  }

  /** A new connection: its first sample stands only until the next one. */
  fresh () {
    this.first = true
  }

  /** Adds a sample taken at time `now` (ms). */
  add (sample, now) {
    if (this.first || this.stale(now) || sample > this.value) {
      this.value = sample
      this.provisional = this.first
      this.first = false
    } else {
      const keep = Math.min(1 - MIN_WEIGHT, Math.exp(-(now - this.stamp) / this.decayMs))
      this.value = this.value * keep + sample * (1 - keep)
    }
    this.stamp = now
    if (this.samples !== null) this.seq = ++this.samples.n
  }

  /** The estimate at time `now`, decayed since the last sample; null before any sample. */
  read (now) {
    if (this.value === null) return null
    const idle = now - this.stamp
    return idle > 0 ? this.value * Math.exp(-idle / this.decayMs) : this.value
  }

  /** Whether there is no sample from the last `staleMs`, nor from the last `staleSamples` of every peer, or only a fresh connection's first. */
  stale (now) {
    return this.value === null || this.provisional || now - this.stamp > this.staleMs || (this.samples !== null && this.samples.n - this.seq > this.staleSamples)
  }
}
