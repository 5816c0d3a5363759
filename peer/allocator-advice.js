// The allocator settings a peer's memory needs (docs/guides/deploying.md, "Memory"): glibc keeps
// what a burst freed unless told to give it back, and only the environment that starts node
// can tell it (MALLOC_* variables are read once, before any JavaScript runs). `zeromesh peer`,
// run as a command, sets them in its sh header; a process of the user's own has to. A peer
// started without them says so once per process: the command in its log, a `Peer` in the
// user's process as a process warning.
export const ALLOCATOR_SETTINGS = Object.freeze({ MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '32768', MALLOC_TRIM_THRESHOLD_: '131072' })

let advised = false

/** What to tell, or null: on glibc, when none of the settings is in this process's environment. */
export function allocatorAdvice (env = process.env) {
  if (process.platform !== 'linux' || Object.keys(ALLOCATOR_SETTINGS).some((k) => env[k] !== undefined)) return null
  if (typeof process.report?.getReport !== 'function' || !process.report.getReport().header?.glibcVersionRuntime) return null // musl (Alpine) and others: not glibc
  const settings = Object.entries(ALLOCATOR_SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ')
  return `zeromesh: this process runs with glibc's default allocator settings, which keep the memory a peer frees after a burst (up to 130 MB measured). Set ${settings} in the environment that starts node (zeromesh peer, run as a command, sets them itself): docs/guides/deploying.md#memory`
}

/** Tells `report` the advice, once per process (the first peer to start, or the command first). */
export function adviseAllocatorOnce (report) {
  if (advised) return
  advised = true
  const advice = allocatorAdvice()
  if (advice !== null) report(advice)
}
