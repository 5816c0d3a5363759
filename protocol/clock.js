// The one place time comes from. Client and Peer take a `clock` option shaped like this,
// so tests and simulations can drive time by hand instead of sleeping.
export const systemClock = Object.freeze({
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
})
