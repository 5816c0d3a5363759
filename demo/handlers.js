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
