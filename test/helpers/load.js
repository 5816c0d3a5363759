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

/** `n` requests of `method`, one after another; resolves with a Map of who answered (`who(result)`) to how many times. */
export async function serialSpread (client, method, n, who) {
  const seen = new Map()
  for (let i = 0; i < n; i++) {
    const w = who(await client.request(method))
    seen.set(w, (seen.get(w) ?? 0) + 1)
  }
  return seen
}
