// The allocator settings a peer's memory needs (docs/guides/deploying.md, "Memory"): glibc keeps
// what a burst freed unless told to give it back, and only the environment that starts node
// can tell it (MALLOC_* variables are read once, before any JavaScript runs). `zeromesh peer`,
// run as a command, sets them in its sh header; a process of the user's own has to. The
// command run without them says so in its start log; a `Peer` in the user's process says so
// once per process, as a process warning, when it matters: when a full collection after a
// burst left HELD_BYTES or more above the lowest RSS it saw (memory the settings would have
// given back), not at every start (a user's unit tests would print it at each run).
export const ALLOCATOR_SETTINGS = Object.freeze({ MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '32768', MALLOC_TRIM_THRESHOLD_: '131072' })

/** RSS still held above the lowest after a full collection that makes a Peer give the advice. */
export const HELD_BYTES = 64 * 1024 * 1024

let advised = false

/**
 * What to tell, or null: on glibc, when none of the settings is in this process's environment.
 * `held`: bytes a full collection after a burst left above the lowest RSS seen, to say so.
 */
export function allocatorAdvice (env = process.env, held = null) {
  if (process.platform !== 'linux' || Object.keys(ALLOCATOR_SETTINGS).some((k) => env[k] !== undefined)) return null
  if (typeof process.report?.getReport !== 'function' || !process.report.getReport().header?.glibcVersionRuntime) return null // musl (Alpine) and others: not glibc
  const settings = Object.entries(ALLOCATOR_SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ')
  const seen = held === null ? 'which keep the memory a peer frees after a burst (up to 130 MB measured)' : `which kept ${Math.round(held / (1024 * 1024))} MB this process freed after a burst, still held after a full collection`
  return `zeromesh: this process runs with glibc's default allocator settings, ${seen}. Set ${settings} in the environment that starts node (zeromesh peer, run as a command, sets them itself): docs/guides/deploying.md#memory`
}

/** Tells `report` the advice (allocatorAdvice's, with `held` when given), once per process. */
export function adviseAllocatorOnce (report, held = null) {
  if (advised) return
  const advice = allocatorAdvice(process.env, held)
  if (advice === null) return
  advised = true
  report(advice)
}
