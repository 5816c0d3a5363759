// What the whole-app benchmarks of bench/work/ share (http-api.js, nest.js, blog-post.js): the
// cheap route driven open loop beside the heavy load, the ways of serving run in turn round
// after round, and the median they report. Children are started with bin/bench/harness.js's
// `child`, which kills what is left when the process exits.
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

/** The command, for the peers an app's heavy route runs on. */
export const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * GET `url` 50 times a second for `seconds` (or until the promise `until` settles), each
 * request on its own (open loop: a slow answer does not hold back the next request, as
 * autocannon's connections would), then waits up to 30 s for the last answers. Resolves with
 * the p99 of the answers' latency (ms), how many came, and the errors (non-2xx answers,
 * failures, none by then).
 */
export async function cheapRoute (url, seconds, until = null) {
  const latencies = []
  let errors = 0
  const pending = []
  let over = false
  until?.finally(() => { over = true })
  const t0 = performance.now()
  for (let i = 0; until === null ? performance.now() - t0 < seconds * 1000 : !over; i++) {
    const start = performance.now()
    pending.push(fetch(url, { signal: AbortSignal.timeout(30000) }).then(async (res) => {
      await res.arrayBuffer()
      if (res.ok) latencies.push(performance.now() - start); else errors++
    }, () => { errors++ }))
    await sleep(Math.max(0, t0 + (i + 1) * 20 - performance.now()))
  }
  await Promise.all(pending)
  latencies.sort((a, b) => a - b)
  return { p99: latencies.length === 0 ? null : Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]), answered: latencies.length, errors }
}

/**
 * Each of `ways` measured once a round for `rounds` rounds, the order rotated each round (no
 * way always runs first, or after the same one): resolves with one list of results per way,
 * in round order. `measure(way)` runs one.
 */
export async function inTurn (ways, rounds, measure) {
  const got = ways.map(() => [])
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < ways.length; k++) {
      const i = (k + r) % ways.length
      got[i].push(await measure(ways[i]))
    }
  }
  return got
}

/** The lower median of the numbers among `xs` (nulls left out), or null when there are none. */
export function lowerMedian (xs) {
  const v = xs.filter((x) => x !== null).sort((a, b) => a - b)
  return v.length === 0 ? null : v[Math.floor((v.length - 1) / 2)]
}

/**
 * Sends each of `children` SIGTERM (a peer drains first) and resolves once every one has
 * exited; any still running after `killAfterMs` gets SIGKILL.
 */
export async function stopped (children, killAfterMs = 10000) {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null)
  const exits = running.map((c) => once(c, 'exit'))
  for (const c of running) c.kill('SIGTERM')
  const timer = setTimeout(() => { for (const c of running) c.kill('SIGKILL') }, killAfterMs)
  await Promise.all(exits)
  clearTimeout(timer)
}
