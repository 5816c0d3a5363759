// Suspicion: how long a suspect member has to refute before it is declared dead. The
// timeout starts at `max` and falls towards `min` as independent peers confirm the suspicion
// (Lifeguard, as in hashicorp/memberlist). The maths is pure; the timer is a small class.

/**
 * Bounds of the suspicion timeout for a cluster of `n` members: the minimum scales with
 * log10(n) (more members, slower dissemination), the maximum is `maxMult` times that.
 */
export function suspicionBounds (n, probeInterval, suspicionMult, maxMult) {
  const scale = Math.max(1, Math.log10(Math.max(1, n)))
  const min = suspicionMult * scale * probeInterval
  return { min, max: maxMult * min }
}

/**
 * Time left before a suspicion confirmed by `confirmations` independent peers (out of `k`
 * expected) expires, `elapsed` ms after it started. Pure; can be negative (already expired).
 */
export function remainingSuspicionTime (confirmations, k, elapsed, min, max) {
  const frac = k < 1 ? 1 : Math.log(confirmations + 1) / Math.log(k + 1)
  const timeout = Math.max(min, Math.floor(max - frac * (max - min)))
  return timeout - elapsed
}

export class Suspicion {
  /**
   * @param {object} o
   * @param {string} o.from   who first suspected
   * @param {number} o.k      confirmations expected
   * @param {number} o.min
   * @param {number} o.max
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => void} o.onExpire
   */
  constructor (o) {
    this.o = o
    this.start = o.clock.now()
    this.confirmers = new Set([o.from])
    this.timer = null
    this.schedule()
  }

  get confirmations () {
    return this.confirmers.size - 1
  }

  /** A suspicion from another peer. Returns true when it was new (and shortened the timer). */
  confirm (from) {
    if (this.confirmers.has(from) || this.confirmations >= this.o.k) return false
    this.confirmers.add(from)
    this.schedule()
    return true
  }

  schedule () {
    const { clock, k, min, max } = this.o
    if (this.timer !== null) clock.clearTimeout(this.timer)
    const left = remainingSuspicionTime(this.confirmations, k, clock.now() - this.start, min, max)
    this.timer = clock.setTimeout(() => { this.timer = null; this.o.onExpire() }, Math.max(0, left))
  }

  cancel () {
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer)
    this.timer = null
  }
}
