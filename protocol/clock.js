import { invalidArgument } from './errors.js'
// The one place time comes from. Client and Peer take a `clock` option shaped like this,
// so tests and simulations can drive time by hand instead of sleeping.
export const systemClock = Object.freeze({
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
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
