// A peak-sensitive moving average of latency (Finagle's "peak EWMA"): a sample above the
// average replaces it at once; lower samples pull it down with a weight that grows with the
// time since the last sample, so it forgets a slow spell over about `decayMs`.

export class PeakEwma {
  constructor (decayMs) {
    this.decayMs = decayMs
    this.value = null
    this.stamp = 0
  }

  /** Adds a sample taken at time `now` (ms). */
  add (sample, now) {
    if (this.value === null || sample > this.value) {
      this.value = sample
    } else {
      const w = Math.exp(-(now - this.stamp) / this.decayMs)
      this.value = this.value * w + sample * (1 - w)
    }
    this.stamp = now
  }
}
