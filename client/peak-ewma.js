// A peak-sensitive moving average of latency (Finagle's "peak EWMA"), one per peer: a sample
// above the estimate replaces it at once; a lower one pulls it down with a weight that grows
// with the time since the last sample, and is at least MIN_WEIGHT, so a peer picked often
// still forgets one slow answer within a few (Finagle's pure time weight lets a busy peer
// carry it for the whole decay time, and lose its share of traffic meanwhile). The estimate
// decays towards zero as it is read (Finagle reads it as a sample of 0), so a peer that is
// not picked becomes cheap and is tried again. An estimate with no sample for `staleMs` is stale: it says nothing of the peer
// as it is now, and the next sample replaces it.

const MIN_WEIGHT = 0.2 // of a lower sample, however soon after the last one

export class PeakEwma {
  /**
   * @param {number} decayMs  the estimate forgets over about this long
   * @param {number} staleMs  after this long without a sample the estimate is stale
   */
  constructor (decayMs, staleMs = Infinity) {
    this.decayMs = decayMs
    this.staleMs = staleMs
    this.value = null
    this.stamp = 0
  }

  /** Adds a sample taken at time `now` (ms). */
  add (sample, now) {
    if (this.value === null || sample > this.value || now - this.stamp > this.staleMs) {
      this.value = sample
    } else {
      const keep = Math.min(1 - MIN_WEIGHT, Math.exp(-(now - this.stamp) / this.decayMs))
      this.value = this.value * keep + sample * (1 - keep)
    }
    this.stamp = now
  }

  /** The estimate at time `now`, decayed since the last sample; null before any sample. */
  read (now) {
    if (this.value === null) return null
    const idle = now - this.stamp
    return idle > 0 ? this.value * Math.exp(-idle / this.decayMs) : this.value
  }

  /** Whether there is no sample from the last `staleMs`. */
  stale (now) {
    return this.value === null || now - this.stamp > this.staleMs
  }
}
