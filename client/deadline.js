// Time left on the client's clock: the one rule every wait and every call's attempt reads, so a
// call that waited (for subscribers, for the servers of a method, in zeromesh/nest for how a
// method is served) goes on with what its deadline has left, in whole milliseconds.

/**
 * The whole milliseconds left at `now` of a deadline at `at` (Infinity: none, 0), at least 1
 * and never more than `timeout` ((now + t) - now is not always t in floating point).
 */
export function msLeft (at, timeout, now) {
  if (at === Infinity) return 0
  return Math.min(timeout, Math.max(1, Math.ceil(at - now)))
}

/** A deadline `timeout` ms from its making, on `clock` (client.deadline() gives one). */
export class Deadline {
  /**
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} clock
   * @param {number} timeout  whole ms from 1
   */
  constructor (clock, timeout) {
    this.clock = clock
    this.timeout = timeout
    this.at = clock.now() + timeout
  }

  /** Whole ms left, at least 1: what to give the next call as its `timeout`. */
  left () {
    return msLeft(this.at, this.timeout, this.clock.now())
  }

  /** Whether it passed. */
  get passed () {
    return this.clock.now() >= this.at
  }

  /** Settles as `promise` does, or resolves with undefined once the deadline passes, whichever is first (its timer cleared either way). */
  within (promise) {
    return new Promise((resolve, reject) => {
      let timer = null
      const arm = () => { // a timer may fire a little before the clock says it is time: armed again for the rest
        const ms = this.at - this.clock.now()
        if (ms <= 0) return resolve(undefined)
        timer = this.clock.setTimeout(arm, Math.ceil(ms))
        timer?.unref?.()
      }
      arm()
      promise.then((v) => { this.clock.clearTimeout(timer); resolve(v) }, (e) => { this.clock.clearTimeout(timer); reject(e) })
    })
  }
}
