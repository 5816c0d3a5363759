// The demo handlers a `zeromesh peer` serves when no --handlers module is given.
import process from 'node:process'

/** Returns its args. */
export function echo (args) {
  return args
}

/** Which peer answered: `{ endpoint, pid }`. */
export function whoami (args, ctx) {
  return { endpoint: ctx.endpoint, pid: process.pid }
}

/** A CPU-bound loop of `n` iterations (the classic cluster benchmark); returns a checksum and who ran it. */
export function spin (args, ctx) {
  const n = args?.n ?? 1e6
  if (!Number.isInteger(n) || n < 0 || n > 1e10) throw Object.assign(new Error('spin: n must be a whole number from 0 to 1e10'), { code: 'BAD_N' })
  let x = 0
  for (let i = 0; i < n; i++) x = (x + i * 2654435761) % 4294967296
  return { n, x, endpoint: ctx?.endpoint }
}

/** Waits `ms` milliseconds (default 10, at most 60000), then returns `{ slept }`. */
export function sleep (args, ctx) {
  const ms = args?.ms ?? 10
  if (typeof ms !== 'number' || !(ms >= 0 && ms <= 60000)) throw Object.assign(new Error('sleep: ms must be a number from 0 to 60000'), { code: 'BAD_MS' })
  return new Promise((resolve) => setTimeout(resolve, ms, { slept: ms }))
}

/**
 * A stream (client.stream('count', { n })): the numbers `from` (default 0) up to `n` (default
 * 10, at most 1e9) as `{ i }`, each with `size` bytes of `pad` when given (at most 1 MB), and
 * `ms` milliseconds between items (default 0). Resume after an error with `from`.
 */
export async function * count (args, ctx) {
  const n = args?.n ?? 10
  const from = args?.from ?? 0
  const size = args?.size ?? 0
  const ms = args?.ms ?? 0
  if (!Number.isInteger(n) || n < 0 || n > 1e9 || !Number.isInteger(from) || from < 0) throw Object.assign(new Error('count: n and from must be whole numbers, n at most 1e9'), { code: 'BAD_N' })
  if (!Number.isInteger(size) || size < 0 || size > 1e6 || typeof ms !== 'number' || !(ms >= 0 && ms <= 60000)) throw Object.assign(new Error('count: size must be 0 to 1e6 bytes, ms 0 to 60000'), { code: 'BAD_SIZE' })
  const pad = size > 0 ? Buffer.alloc(size, 0x5a) : null
  for (let i = from; i < n; i++) {
    if (ctx?.signal.aborted) return
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    yield pad === null ? { i } : { i, pad }
  }
}

/**
 * The demo's subscription: `cache.drop` (in its own group, so a publish reaches one demo peer
 * and a broadcast every one) logs the key it was given, on stderr, and drops nothing.
 */
export const events = {
  'cache.drop': (key) => { process.stderr.write(`cache.drop ${JSON.stringify(key)}\n`) },
}
