// Wall-clock timing of a method's calls, for bench/steps.js and its peer preload.

/**
 * Wraps `obj[name]` so every call adds its wall-clock time to `steps[label]`
 * ({ calls, ns }), which it returns. Nested timed calls count in both: the caller's time
 * includes them.
 */
export function timeCalls (steps, obj, name, label) {
  const f = obj[name]
  const s = (steps[label] = { calls: 0, ns: 0 })
  obj[name] = function (...args) {
    const t = process.hrtime.bigint()
    try {
      return f.apply(this, args)
    } finally {
      s.ns += Number(process.hrtime.bigint() - t)
      s.calls++
    }
  }
  return s
}
