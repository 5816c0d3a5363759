// A retry budget (as Finagle's): over a sliding window, retries may be at most `percent` of
// the requests plus a floor of `minPerSecond`, so a sick cluster is not stormed by clients
// retrying everything. Time comes from the injected clock; buckets of one second.

export class RetryBudget {
  /**
   * @param {object} o
   * @param {number} o.percent        share of requests that may be retried, e.g. 0.2
   * @param {number} o.minPerSecond   retries allowed per second whatever the traffic
   * @param {number} o.windowMs       how far back requests and retries are counted
   * @param {{ now(): number }} o.clock
   */
  constructor (o) {
    this.o = o
    this.size = Math.max(1, Math.ceil(o.windowMs / 1000))
    this.requests = new Array(this.size).fill(0)
    this.retries = new Array(this.size).fill(0)
    this.second = Math.floor(o.clock.now() / 1000)
  }

  roll (at = this.o.clock.now()) {
    const now = Math.floor(at / 1000)
    const steps = Math.min(this.size, now - this.second)
    for (let i = 1; i <= steps; i++) {
      const b = (this.second + i) % this.size
      this.requests[b] = 0
      this.retries[b] = 0
    }
    if (now > this.second) this.second = now
    return this.second % this.size
  }

  /** A first attempt (at clock time `at`): adds to what may be retried. */
  deposit (at) {
    this.requests[this.roll(at)]++
  }

  /** Whether one more retry fits the budget now (takes nothing). */
  allows () {
    this.roll()
    let requests = 0; let retries = 0
    for (let i = 0; i < this.size; i++) { requests += this.requests[i]; retries += this.retries[i] }
    return retries + 1 <= this.o.minPerSecond * this.size + this.o.percent * requests
  }

  /** Takes one retry from the budget; false when it is spent. */
  withdraw () {
    if (!this.allows()) return false
    this.retries[this.second % this.size]++
    return true
  }
}
