// The seed's crash loop (issue 68, item 1): two `zeromesh peer` processes of one thread serving
// a ~5 ms handler (bench/lib/countdown-handlers.js), each killed (SIGKILL) 1-3 s after it starts
// and restarted on its endpoint by a supervisor loop here, as the blog post's cluster restarts
// a crashed worker on 'exit'; an HTTP front in a process of its own calling them through a
// Client with default options (bench/lib/crash-front.js); a CPU-bound process beside them
// (--hog, on by default), as on a machine that also runs another job; and autocannon at
// --connections for --seconds against the front, --runs times. Prints each run: requests,
// crashes, failures by code (and the first message of each), the client's retries, what the
// retry budget stopped, p99 and the slowest request, and the share of the run in which the
// client saw no peer up. test/scenarios/crash-loop.scenario.js runs it with the defaults.
//
// Usage: node bench/work/crash-loop.js [--runs 3] [--seconds 10] [--connections 200]
//        [--max-queue N] [--max-queue-ms MS] [--countdown-from N] [--no-crash] [--no-hog] [--json]
// (--countdown-from: where the handler counts down from, default 1e7; the scenario sizes it
// to about 5 ms on the machine it runs on)
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { spawn } from 'node:child_process'

const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const HANDLERS = fileURLToPath(new URL('../lib/countdown-handlers.js', import.meta.url))
const FRONT = fileURLToPath(new URL('../lib/crash-front.js', import.meta.url))
const SPIN = fileURLToPath(new URL('../lib/spin-forever.js', import.meta.url))

const children = new Set()
/** `node script ...args`, its output collected; killAll() kills it by PID. */
function spawnNode (script, args, env = {}) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  const c = { child, pid: child.pid, stdout: '', stderr: '' }
  child.stdout.setEncoding('utf8').on('data', (d) => { c.stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d) => { c.stderr = (c.stderr + d).slice(-4000) })
  c.exited = new Promise((resolve) => child.on('exit', (code, signal) => { children.delete(c); resolve({ code, signal }) }))
  children.add(c)
  return c
}
async function killAll () {
  const list = [...children]
  for (const c of list) { try { process.kill(c.pid, 'SIGKILL') } catch {} }
  await Promise.all(list.map((c) => c.exited))
}

function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

function firstLine (c, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${c.stderr}`)), 15000)
    const check = () => { if (c.stdout.includes('\n')) { clearTimeout(timer); resolve(c.stdout.split('\n')[0].trim()) } }
    c.child.stdout.on('data', check)
    check()
    c.exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`${what} exited (${code ?? signal}): ${c.stderr}`)) })
  })
}

/** A peer on `endpoint` that is restarted whenever it exits and, with `crash`, killed 1-3 s after each start; `extra`: more flags, `env`: more environment. */
function supervised (endpoint, seeds, crash, extra, env) {
  const s = { crashes: 0, stopped: false, timer: null }
  const start = () => {
    if (s.stopped) return
    const c = spawnNode(BIN, ['peer', '--bind', endpoint, '--seeds', seeds.join(','), '--handlers', HANDLERS, '--threads', '1', '--log-level', 'error', ...extra], env)
    c.exited.then(() => { clearTimeout(s.timer); start() })
    if (crash) s.timer = setTimeout(() => { s.crashes++; try { process.kill(c.pid, 'SIGKILL') } catch {} }, 1000 + Math.random() * 2000)
  }
  start()
  s.stop = () => { s.stopped = true; clearTimeout(s.timer) }
  return s
}

/**
 * One run: the figures of `seconds` of load. `peerFlags`: more flags for each `zeromesh peer`
 * (none: its defaults); `countdownFrom`: where the handler counts down from (1e7 unless given).
 */
export async function crashLoopRun ({ seconds = 10, connections = 200, crash = true, hog = true, peerFlags = [], countdownFrom } = {}) {
  const env = countdownFrom === undefined ? {} : { COUNTDOWN_FROM: String(countdownFrom) }
  const endpoints = [`tcp://127.0.0.1:${await freePort()}`, `tcp://127.0.0.1:${await freePort()}`]
  try {
    if (hog) spawnNode(SPIN, [])
    const peers = endpoints.map((ep) => supervised(ep, endpoints.filter((x) => x !== ep), crash, peerFlags, env))
    const front = spawnNode(FRONT, [endpoints.join(',')])
    const port = await firstLine(front, 'the HTTP front')
    const out = await autocannon({ url: `http://127.0.0.1:${port}/`, connections, duration: seconds })
    for (const p of peers) p.stop()
    const stats = await (await fetch(`http://127.0.0.1:${port}/stats`)).json()
    return {
      requests: out.requests.total,
      failed: out.non2xx + out.errors + out.timeouts,
      byCode: stats.frontFailures,
      firstMessages: stats.frontMessages,
      crashes: peers.reduce((n, p) => n + p.crashes, 0),
      retries: stats.retries,
      budgetStopped: stats.budgetExhausted,
      p99ms: out.latency.p99,
      maxMs: out.latency.max, // against the client's default 5 s timeout
      noPeerUp: Math.round(stats.noneUp * 100) / 100, // share of the run the client saw no peer up
    }
  } finally {
    await killAll()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '200' },
      'max-queue': { type: 'string' },
      'max-queue-ms': { type: 'string' },
      'countdown-from': { type: 'string' },
      'no-crash': { type: 'boolean', default: false },
      'no-hog': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  })
  const peerFlags = []
  for (const flag of ['max-queue', 'max-queue-ms']) if (values[flag] !== undefined) peerFlags.push(`--${flag}`, values[flag])
  const runs = []
  for (let i = 0; i < Number(values.runs); i++) {
    runs.push(await crashLoopRun({ seconds: Number(values.seconds), connections: Number(values.connections), crash: !values['no-crash'], hog: !values['no-hog'], peerFlags, countdownFrom: values['countdown-from'] === undefined ? undefined : Number(values['countdown-from']) }))
    if (!values.json) console.log(`run ${i + 1}: ${JSON.stringify(runs.at(-1))}`)
  }
  if (values.json) console.log(JSON.stringify(runs))
}
