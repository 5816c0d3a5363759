// Steady load for failover tests: `concurrency` loops calling `one()` until stopped, counting
// successes and collecting failures. A closed client ends its loop (no spinning on rejections).

export function startLoad (concurrency, one) {
  const state = { ok: 0, failures: [], stopped: false }
  const loops = Array.from({ length: concurrency }, async (_, i) => {
    while (!state.stopped) {
      try {
        await one(i)
        state.ok++
      } catch (err) {
        state.failures.push(`${err.code}: ${err.message}`)
        if (err.code === 'ERR_ZEROMESH_CLOSED') return
      }
    }
  })
  state.stop = async () => {
    state.stopped = true
    await Promise.all(loops)
  }
  return state
}
