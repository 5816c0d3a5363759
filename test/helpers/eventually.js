// Polls `fn` until it stops throwing (and returns its value), or rethrows its last error
// once `timeout` ms have passed. Use instead of sleeps.
export async function eventually (fn, { timeout = 5000, interval = 20 } = {}) {
  const end = Date.now() + timeout
  for (;;) {
    try {
      return await fn()
    } catch (err) {
      if (Date.now() >= end) throw err
      await new Promise((resolve) => setTimeout(resolve, interval))
    }
  }
}

export const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Reads `read()` every `interval` ms until `ok(value)` holds or `timeout` ms have passed;
 * resolves { value, ms, ok } either way: for a measurement that reports what it saw.
 */
export async function sampleUntil (read, ok, { timeout = 30000, interval = 250 } = {}) {
  const t0 = Date.now()
  for (;;) {
    const value = await read()
    const ms = Date.now() - t0
    if (ok(value)) return { value, ms, ok: true }
    if (ms >= timeout) return { value, ms, ok: false }
    await delay(interval)
  }
}

/**
 * A reading (an RSS, say) once it holds still: the last of `samples` readings `interval` ms
 * apart that lie within `tolerance` of each other, or the last one read at `timeout` ms.
 */
export async function steady (read, { tolerance, interval = 250, samples = 3, timeout = 10000 }) {
  const seen = []
  const { value } = await sampleUntil(async () => { seen.push(await read()); return seen.slice(-samples) },
    (last) => last.length === samples && Math.max(...last) - Math.min(...last) <= tolerance, { timeout, interval })
  return value[value.length - 1]
}
