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
