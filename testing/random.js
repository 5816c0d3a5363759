// A deterministic random source, so a test or a simulation replays exactly from its seed.

/** A random source in [0, 1) from `seed` (a linear congruential generator): the same seed, the same numbers. */
export function seededRandom (seed = 1) {
  let s = seed >>> 0
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296 }
}
