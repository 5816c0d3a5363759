// The one place time comes from. Client and Peer take a `clock` option shaped like this,
// so tests and simulations can drive time by hand instead of sleeping.
import { invalidArgument } from '../protocol/errors.js'

/**
 * The longest delay a Node timer takes (2^31-1 ms, about 24.8 days). A longer one fires after
 * 1 ms with a TimeoutOverflowWarning, so every delay is clamped to this: a deadline further
 * away than that (a spec-valid timeoutMs can be up to 2^53-1) fires at 24.8 days instead.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** `ms` as a delay a timer keeps: clamped to 0..MAX_TIMER_MS. */
export function timerDelay (ms) {
  return ms > MAX_TIMER_MS ? MAX_TIMER_MS : ms > 0 ? ms : 0
}

export const systemClock = Object.freeze({
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, timerDelay(ms)),
  clearTimeout: (t) => clearTimeout(t),
})

/** Checks a `clock` option: an object with now(), setTimeout(fn, ms) and clearTimeout(t). */
export function clockOption (v, name) {
  if (v === undefined) return systemClock
  for (const f of ['now', 'setTimeout', 'clearTimeout']) {
    if (typeof v?.[f] !== 'function') throw invalidArgument(`${name} must have ${f}(); give { now, setTimeout, clearTimeout }`)
  }
  return v
}
