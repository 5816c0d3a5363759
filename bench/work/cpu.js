// CPU-bound work two ways, in one run (servers in child processes):
//
// threads: requests of `spin` (a loop of n iterations) through zeromesh with 1 worker thread
// vs N, and through N separate peers of 1 thread each, at 2 requests in flight per thread.
// Each counts the answers within the same window after a warm-up, and says where the CPU went
// in that window (per request: the peers' worker threads, main threads, ZeroMQ I/O threads,
// other threads, and the client), from /proc.
//
// http: the Node scaling tutorials' comparison. The API of examples/express (GET / cheap,
// GET /primes?limit=200000 about 12 ms of CPU) as one process, as node:cluster with one worker
// per core, and as Express + zeromesh (one peer with a thread per core; a peer per core of
// one thread each), each started cold and driven at once by autocannon: the heavy route at
// --connections in flight for --seconds, the cheap route at 50 requests a second beside it.
// Reports the heavy route's req/s, p50 and p99, the cheap route's p99, and every error
// (non-2xx answers, socket errors, timeouts), from the first request on.
//
// nest: the NestJS tutorial's own case. The app of examples/nestjs (GET / cheap, GET /heavy
// counting to 50,000,000) as one process, under pm2 cluster mode with one instance per core,
// and as a gateway + a zeromesh microservice of a thread per core (zeromesh/nest), each
// started cold and driven by the tutorial's command, `loadtest -n 1200 -c 400 -k` (in a
// process of its own), with GET / at 50 a second beside it. Reports the total time, req/s,
// /heavy's p50, p90, p99 and max, GET /'s p99 under that load, errors, and the gateway's
// zeromesh client retries and attempt timeouts.
//
// post: the blog post's app (issue 68; bench/lib/post-server.js): a plain node:http server
// whose GET / counts down from 1e7 (about 5 ms of CPU), as node:cluster with one worker per
// core, and as the same server whose count runs on one zeromesh peer of a thread per core
// (the front and the peer in processes of their own), each started cold and driven by
// autocannon -c --connections -d --http-seconds, GET /cheap at 50 a second beside it; --rounds
// rounds, rotating which way goes first; the same front written with zeromesh/http's gateway
// is a third way, its per-round ratio to the hand-written front beside. Reports the heavy
// route's req/s and p99, the cheap route's p99, errors, per-round ratios to cluster (and the
// gateway's to the hand-written front), and CPU per answered request by process
// and thread (from /proc: the front's main thread and its others, the peer's main thread, its
// handler threads and ZeroMQ's I/O threads; cluster's workers whole).
//
// Usage: node bench/work/cpu.js [--only threads|http|nest|post] [--n 15000000] [--seconds 8] [--threads 2]
//        [--inflight N] [--limit 200000] [--connections 100] [--http-seconds 10]
//        [--max-queue N] [--requests 1200] [--concurrency 400] [--rounds 1] [--ways cluster,zeromesh,gateway] [--json]
// (--rounds: for nest, the three ways in turn, rotated each round; medians and per-round ratios)
// (--ways: for post, which of cluster, zeromesh (the hand-written front) and gateway to run; default all three)
// (--max-queue: the zeromesh peers' queue, per peer; default the peer's, 64 per thread)
// (--inflight: requests in flight for every threads measurement; default 2 per thread)
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs, { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import autocannon from 'autocannon'
import { Client } from '../../index.js'
import { threadStats } from '../lib/proc-threads.js'

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    n: { type: 'string', default: '15000000' },
    seconds: { type: 'string', default: '8' },
    threads: { type: 'string', default: String(os.availableParallelism()) },
    inflight: { type: 'string' },
    limit: { type: 'string', default: '200000' },
    connections: { type: 'string', default: '100' },
    'http-seconds': { type: 'string', default: '10' },
    'max-queue': { type: 'string' },
    ways: { type: 'string', default: 'cluster,zeromesh,gateway' },
    requests: { type: 'string', default: '1200' },
    rounds: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '400' },
    json: { type: 'boolean' },
  },
})
if (values.only !== undefined && !['threads', 'http', 'nest', 'post'].includes(values.only)) throw new Error('--only takes threads, http, nest or post')
const N = Number(values.n)
const SECONDS = Number(values.seconds)
const THREADS = Number(values.threads)
const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))

const children = []
process.on('exit', () => { for (const c of children) try { process.kill(c.pid, 'SIGKILL') } catch {} })

function peer (threads) {
  // Room to queue everything in flight: a bench counts work done, not refusals.
  const queue = Math.max(64 * Math.max(1, threads), Number(values.inflight ?? 0))
  const c = spawn(process.execPath, [BIN, 'peer', '--demo-handlers', '--threads', String(threads), '--max-queue', String(queue)], { stdio: ['ignore', 'pipe', 'ignore'] })
  children.push(c)
  return new Promise((resolve) => c.stdout.once('data', (d) => resolve({ c, threads, endpoint: d.toString().trim() })))
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Where the CPU went during the window, in us per answered request: the peers' worker threads
 * (the `threads` busiest of each peer: the handler and the thread's own work), their main
 * threads, ZeroMQ's I/O threads, their other threads (V8's, libuv's), and this process (the
 * client and the load loops).
 */
function account (started, before, after, clientMs, done) {
  const per = (ms) => +(ms * 1000 / done).toFixed(1)
  const sums = { workerThreads: 0, peerMain: 0, zmqIo: 0, peerOther: 0 }
  started.forEach((p, i) => {
    const used = []
    for (const [tid, t] of after[i]) used.push({ tid, name: t.name, ms: (t.cpuUs - (before[i].get(tid)?.cpuUs ?? 0)) / 1000 })
    used.sort((a, b) => b.ms - a.ms)
    const workers = new Set(used.filter((u) => Number(u.tid) !== p.c.pid && u.name === 'node').slice(0, p.threads).map((u) => u.tid))
    for (const u of used) {
      if (workers.has(u.tid)) sums.workerThreads += u.ms
      else if (Number(u.tid) === p.c.pid) sums.peerMain += u.ms
      else if (u.name.startsWith('ZMQbg')) sums.zmqIo += u.ms
      else sums.peerOther += u.ms
    }
  })
  return { usPerRequest: { workerThreads: per(sums.workerThreads), peerMain: per(sums.peerMain), zmqIo: per(sums.zmqIo), peerOther: per(sums.peerOther), client: per(clientMs) } }
}

/**
 * Requests answered per second by `peers` (one per element: its --threads), driven by one
 * client at `concurrency` in flight: after a 1 s warm-up, the answers that come within
 * SECONDS are counted; then the client closes (what is still in flight is not waited for).
 */
async function measure (threads, peers = [threads], concurrency = values.inflight === undefined ? Math.max(1, threads) * 2 : Number(values.inflight)) {
  const started = await Promise.all(peers.map((t) => peer(t)))
  const client = new Client({ seeds: started.map((p) => p.endpoint), timeout: 600000, discover: false })
  await Promise.all(started.map((p) => client.request('spin', { n: 1000 })))
  let counting = false
  let done = 0
  const loops = Array.from({ length: concurrency }, async () => {
    try {
      for (;;) { await client.request('spin', { n: N }); if (counting) done++ }
    } catch { /* closed at the end */ }
  })
  await sleep(1000)
  counting = true
  const t0 = performance.now()
  const before = started.map((p) => threadStats(p.c.pid))
  const cpu0 = process.cpuUsage()
  await sleep(SECONDS * 1000)
  counting = false
  const secs = (performance.now() - t0) / 1000
  const after = started.map((p) => threadStats(p.c.pid))
  const cpu = process.cpuUsage(cpu0)
  const cpuAccount = account(started, before, after, (cpu.user + cpu.system) / 1000, done)
  await client.close()
  await Promise.all(loops)
  for (const p of started) p.c.kill('SIGKILL')
  return { threads, peers: peers.length, requests: done, perSecond: +(done / secs).toFixed(2), ...cpuAccount }
}

const SERVER = fileURLToPath(new URL('../lib/http-server.js', import.meta.url))
const HANDLERS = fileURLToPath(new URL('../../examples/express/handlers.js', import.meta.url))

/** A child that prints a line when ready (its endpoint or port); resolves with { c, line }. */
function child (args) {
  const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] })
  children.push(c)
  return new Promise((resolve, reject) => {
    c.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before it was ready`)))
    c.stdout.once('data', (d) => resolve({ c, line: d.toString().trim().split('\n')[0] }))
  })
}

/**
 * One way of serving the API (`mode`: single, cluster, or zeromesh with `peers`: the thread
 * count of each peer), started cold and driven at once; then stopped.
 */
async function measureHttp (name, mode, peers = []) {
  const queue = values['max-queue'] === undefined ? [] : ['--max-queue', values['max-queue']]
  const started = await Promise.all(peers.map((t) => child([BIN, 'peer', '--handlers', HANDLERS, '--threads', String(t), ...queue])))
  const arg = mode === 'cluster' ? String(THREADS) : started.map((p) => p.line).join(',')
  const server = await child([SERVER, mode, arg])
  const base = `http://127.0.0.1:${server.line}`
  const duration = Number(values['http-seconds'])
  const [heavy, cheap] = await Promise.all([
    autocannon({ url: `${base}/primes?limit=${Number(values.limit)}`, connections: Number(values.connections), duration, timeout: 30 }),
    cheapRoute(`${base}/`, duration),
  ])
  server.c.kill('SIGTERM')
  for (const p of started) p.c.kill('SIGTERM')
  await sleep(500)
  return {
    name,
    perSecond: +(heavy.requests.total / duration).toFixed(1),
    heavyP50: heavy.latency.p50,
    heavyP99: heavy.latency.p99,
    cheapP99: cheap.p99,
    cheapAnswered: cheap.answered,
    errors: heavy.errors + heavy.timeouts + heavy.non2xx + cheap.errors,
  }
}

/**
 * GET `url` 50 times a second for `seconds` (or until the promise `until` settles), each
 * request on its own (open loop: a slow answer does not hold back the next request, as
 * autocannon's connections would), then waits up to 30 s for the last answers. Resolves with
 * the p99 of the answers' latency (ms), how many came, and the errors (non-2xx answers,
 * failures, none by then).
 */
async function cheapRoute (url, seconds, until = null) {
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

const LOADTEST = fileURLToPath(new URL('../lib/loadtest-run.js', import.meta.url))
const PM2 = fileURLToPath(new URL('../../node_modules/pm2/bin/pm2', import.meta.url))

/** Runs `cmd` (node and its args) to its end; resolves with its stdout, rejects with its stderr. */
function runToEnd (args, env = {}) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    let out = ''
    let err = ''
    c.stdout.on('data', (d) => { out += d })
    c.stderr.on('data', (d) => { err += d })
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`))))
  })
}

/** A port free on 127.0.0.1 now (for pm2's instances, which share one). */
async function freePort () {
  const net = await import('node:net')
  const s = net.createServer()
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address()
  await new Promise((resolve) => s.close(resolve))
  return port
}

/** Starts `script` of examples/nestjs/dist with `env`; resolves once its stdout matches `ready` (capture 1), with { c, line, stderr() }. */
function nestProcess (script, env, ready) {
  const c = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  children.push(c)
  let out = ''
  let err = ''
  c.stderr.on('data', (d) => { err += d })
  return new Promise((resolve, reject) => {
    c.once('exit', (code) => reject(new Error(`${script} exited ${code} before it was ready: ${err}`)))
    c.stdout.on('data', (d) => {
      out += d
      const m = ready.exec(out)
      if (m) resolve({ c, line: m[1], stderr: () => err })
    })
  })
}

/**
 * The NestJS app served one way (`mode`: single, pm2, or zeromesh), started cold and driven
 * by loadtest -n --requests -c --concurrency -k on /heavy, GET / at 50 a second beside it;
 * then stopped.
 */
async function measureNest (name, mode, dist) {
  let base
  let stop
  let retries = null
  if (mode === 'single') {
    const app = await nestProcess(path.join(dist, 'main.js'), { PORT: '0' }, /listening on (\S+)\n/)
    base = app.line
    stop = async () => { app.c.kill('SIGTERM'); await once(app.c, 'exit') }
  } else if (mode === 'pm2') {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-bench-pm2-'))
    const port = await freePort()
    const env = { PM2_HOME: home, PORT: String(port) }
    await runToEnd([PM2, 'start', path.join(dist, 'main.js'), '-i', String(THREADS), '--name', 'nest-bench'], env)
    base = `http://127.0.0.1:${port}`
    for (let i = 0; i < 100; i++) { try { if ((await fetch(`${base}/`)).ok) break } catch {} await sleep(100) }
    stop = async () => { await runToEnd([PM2, 'kill'], env); fs.rmSync(home, { recursive: true, force: true }) }
  } else {
    const ms = await nestProcess(path.join(dist, 'microservice.js'), { BIND: 'tcp://127.0.0.1:0', THREADS: String(THREADS) }, /^(tcp:\S+)\n/)
    const gw = await nestProcess(path.join(dist, 'gateway.js'), { ZEROMESH_SEEDS: ms.line, PORT: '0', TIMEOUT_MS: '30000' }, /listening on (\S+)\n/)
    base = gw.line
    stop = async () => {
      gw.c.kill('SIGTERM')
      await once(gw.c, 'exit')
      const m = /zeromesh client: (\{.*\})/.exec(gw.stderr())
      if (m) retries = JSON.parse(m[1])
      ms.c.kill('SIGTERM')
      await once(ms.c, 'exit')
    }
  }
  const load = runToEnd([LOADTEST, `${base}/heavy`, values.requests, values.concurrency]).then((out) => JSON.parse(out))
  const [lt, cheap] = await Promise.all([load, cheapRoute(`${base}/`, null, load)])
  await stop()
  return {
    name,
    totalSeconds: +lt.totalTimeSeconds.toFixed(1),
    perSecond: lt.rps,
    heavy: { p50: lt.p50, p90: lt.p90, p99: lt.p99, max: lt.max },
    cheapP99: cheap.p99,
    errors: lt.errors + cheap.errors,
    retries: retries === null ? null : retries.retries,
    attemptTimeouts: retries === null ? null : retries.attemptTimeouts,
  }
}

const POST_SERVER = fileURLToPath(new URL('../lib/post-server.js', import.meta.url))
const COUNTDOWN = fileURLToPath(new URL('../lib/countdown-handlers.js', import.meta.url))

/** The PIDs of process `pid`'s children (Linux), cluster's workers. */
function childrenOf (pid) {
  try { return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) } catch { return [] }
}

/** CPU us so far of `pids`, by role: each thread of a process named by `roleOf(pid, tid, name)`. */
function cpuByRole (pids, roleOf) {
  const out = {}
  for (const pid of pids) {
    for (const [tid, t] of threadStats(pid)) {
      const role = roleOf(pid, Number(tid), t.name)
      out[role] = (out[role] ?? 0) + t.runUs
    }
  }
  return out
}

/**
 * The post's app served one way (`mode`: cluster or zeromesh), started cold and driven by
 * autocannon on GET /, GET /cheap at 50 a second beside it; then stopped. CPU by role over
 * the run, in us per answered heavy request.
 */
async function measurePost (mode) {
  const started = mode !== 'cluster' ? [await child([BIN, 'peer', '--handlers', COUNTDOWN, '--threads', String(THREADS), '--log-level', 'error'])] : []
  const server = await child([POST_SERVER, mode, mode === 'cluster' ? String(THREADS) : started[0].line])
  const base = `http://127.0.0.1:${server.line}`
  const front = server.c.pid
  const peerPid = started[0]?.c.pid
  const pids = mode === 'cluster' ? [front, ...childrenOf(front)] : [front, peerPid]
  const roleOf = (pid, tid, name) => {
    if (mode === 'cluster') return pid === front ? 'primary' : 'workers'
    const who = pid === front ? 'front' : 'peer'
    if (tid === pid) return `${who}Main`
    if (name.startsWith('ZMQbg')) return `${who}ZmqIo`
    if (who === 'peer' && name === 'node') return 'peerThreads' // its handler threads and V8's
    return `${who}Other`
  }
  const before = cpuByRole(pids, roleOf)
  const duration = Number(values['http-seconds'])
  const [heavy, cheap] = await Promise.all([
    autocannon({ url: `${base}/`, connections: Number(values.connections), duration }),
    cheapRoute(`${base}/cheap`, duration),
  ])
  const after = cpuByRole(pids, roleOf)
  const stopped = [server.c, ...started.map((p) => p.c)]
  for (const c of stopped) c.kill('SIGTERM')
  await Promise.all(stopped.map((c) => c.exitCode !== null || c.signalCode !== null ? null : once(c, 'exit')))
  const answered = heavy.requests.total - heavy.non2xx - heavy.errors - heavy.timeouts
  const cpuUs = {}
  for (const k of Object.keys(after).sort()) cpuUs[k] = Math.round((after[k] - (before[k] ?? 0)) / Math.max(1, answered))
  return {
    perSecond: +(answered / duration).toFixed(1),
    heavyP99: heavy.latency.p99,
    cheapP99: cheap.p99,
    errors: heavy.errors + heavy.timeouts + heavy.non2xx + cheap.errors,
    cpuUsPerRequest: cpuUs,
  }
}

const report = { date: new Date().toISOString(), cpus: os.availableParallelism(), node: process.version }

if (values.only === undefined || values.only === 'threads') {
  // The handler alone: spin(N) in this process, warm, on an otherwise idle machine.
  const { spin } = await import('../../demo/handlers.js')
  for (let i = 0; i < 50; i++) spin({ n: N })
  const h0 = process.cpuUsage()
  for (let i = 0; i < 200; i++) spin({ n: N })
  const h = process.cpuUsage(h0)
  const one = await measure(1)
  const many = await measure(THREADS)
  // THREADS separate peers of 1 thread each, at the same total in flight: threads against processes.
  const peers = await measure(1, Array.from({ length: THREADS }, () => 1), values.inflight === undefined ? THREADS * 2 : Number(values.inflight))
  report.threads = {
    n: N,
    seconds: SECONDS,
    handlerUs: +((h.user + h.system) / 200).toFixed(1), // CPU us of one spin(N) alone
    one,
    many,
    ratio: +(many.perSecond / one.perSecond).toFixed(2),
    peers,
    threadsVsPeers: +(many.perSecond / peers.perSecond).toFixed(2),
  }
}

if (values.only === undefined || values.only === 'http') {
  const runs = [
    await measureHttp('one process', 'single'),
    await measureHttp(`cluster x${THREADS}`, 'cluster'),
    await measureHttp(`zeromesh, 1 peer x ${THREADS} threads`, 'zeromesh', [THREADS]),
    await measureHttp(`zeromesh, ${THREADS} peers x 1 thread`, 'zeromesh', Array.from({ length: THREADS }, () => 1)),
  ]
  const cl = runs[1]
  report.http = {
    limit: Number(values.limit),
    connections: Number(values.connections),
    seconds: Number(values['http-seconds']),
    runs: runs.map((r) => ({ ...r, vsCluster: { perSecond: +(r.perSecond / cl.perSecond).toFixed(2), heavyP99: +(r.heavyP99 / cl.heavyP99).toFixed(2) } })),
  }
}

if (values.only === undefined || values.only === 'nest') {
  const { buildNestExample } = await import('../lib/nest-example.js')
  const built = await buildNestExample()
  const dist = built.dist
  const ways = [['one process', 'single'], [`pm2 -i ${THREADS}`, 'pm2'], [`gateway + zeromesh, 1 peer x ${THREADS} threads`, 'zeromesh']]
  const got = ways.map(() => [])
  const rounds = Number(values.rounds)
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < ways.length; k++) {
      const i = (k + r) % ways.length // rotated: no way always runs first, or after the same one
      got[i].push(await measureNest(ways[i][0], ways[i][1], dist))
    }
  }
  await built.remove()
  const med = (xs) => { const v = xs.filter((x) => x !== null).sort((a, b) => a - b); return v.length === 0 ? null : v[Math.floor((v.length - 1) / 2)] }
  const ratio = (i, f) => got[i].map((run, r) => f(run) / f(got[1][r]))
  const fmt = (xs) => `${med(xs).toFixed(2)}${xs.length > 1 ? ` (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})` : ''}`
  report.nest = {
    requests: Number(values.requests),
    concurrency: Number(values.concurrency),
    rounds,
    runs: got.map((runs, i) => ({
      name: ways[i][0],
      totalSeconds: med(runs.map((x) => x.totalSeconds)),
      perSecond: med(runs.map((x) => x.perSecond)),
      heavy: { p50: med(runs.map((x) => x.heavy.p50)), p90: med(runs.map((x) => x.heavy.p90)), p99: med(runs.map((x) => x.heavy.p99)), max: med(runs.map((x) => x.heavy.max)) },
      cheapP99: med(runs.map((x) => x.cheapP99)),
      errors: runs.reduce((a, x) => a + x.errors, 0),
      retries: med(runs.map((x) => x.retries)),
      attemptTimeouts: med(runs.map((x) => x.attemptTimeouts)),
      vsPm2: { total: fmt(ratio(i, (x) => x.totalSeconds)), heavyP99: fmt(ratio(i, (x) => x.heavy.p99)) },
      each: runs,
    })),
  }
}

if (values.only === 'post') {
  const all = [[`cluster x${THREADS}`, 'cluster'], [`front + zeromesh, 1 peer x ${THREADS} threads`, 'zeromesh'], [`gateway (zeromesh/http) + zeromesh, 1 peer x ${THREADS} threads`, 'gateway']]
  const asked = values.ways.split(',')
  if (asked.length === 0 || asked.some((w) => !all.some(([, m]) => m === w))) throw new Error('--ways takes cluster, zeromesh and gateway, comma-separated')
  const ways = all.filter(([, m]) => asked.includes(m))
  const got = ways.map(() => [])
  const of = (mode) => got[ways.findIndex(([, m]) => m === mode)] ?? null
  const rounds = Number(values.rounds)
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < ways.length; k++) {
      const i = (k + r) % ways.length // rotated: no way always runs first, or after the same one
      got[i].push(await measurePost(ways[i][1]))
    }
  }
  const med = (xs) => { const v = xs.filter((x) => x !== null).sort((a, b) => a - b); return v.length === 0 ? null : v[Math.floor((v.length - 1) / 2)] }
  const perRound = (f, a, b, digits = 2) => a === null || b === null ? [] : a.map((run, r) => +(f(run) / f(b[r])).toFixed(digits))
  report.post = {
    connections: Number(values.connections),
    seconds: Number(values['http-seconds']),
    rounds,
    runs: got.map((runs, i) => ({
      name: ways[i][0],
      perSecond: med(runs.map((x) => x.perSecond)),
      heavyP99: med(runs.map((x) => x.heavyP99)),
      cheapP99: med(runs.map((x) => x.cheapP99)),
      errors: runs.reduce((a, x) => a + x.errors, 0),
      each: runs,
    })),
    zeromeshVsCluster: { perSecond: perRound((x) => x.perSecond, of('zeromesh'), of('cluster')), heavyP99: perRound((x) => x.heavyP99, of('zeromesh'), of('cluster')) },
    gatewayVsFront: perRound((x) => x.perSecond, of('gateway'), of('zeromesh'), 3),
  }
  report.post.gatewayVsFrontMedian = med(report.post.gatewayVsFront)
}

if (values.json) console.log(JSON.stringify(report))
else {
  if (report.threads) console.log(JSON.stringify(report.threads, null, 2))
  if (report.http) {
    console.log(`\nHTTP API, heavy route countPrimes(${report.http.limit}) at ${report.http.connections} connections for ${report.http.seconds} s, GET / at 50/s beside it (${report.cpus} cores, ${report.node}; peers' --max-queue ${values['max-queue'] ?? 'default'}):`)
    console.log('| served as | req/s | heavy p50 ms | heavy p99 ms | GET / p99 ms | errors | req/s vs cluster | heavy p99 vs cluster |')
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for (const r of report.http.runs) console.log(`| ${r.name} | ${r.perSecond} | ${r.heavyP50} | ${r.heavyP99} | ${r.cheapP99} | ${r.errors} | ${r.vsCluster.perSecond}x | ${r.vsCluster.heavyP99}x |`)
    console.log('(errors from the first request on: every server started cold; GET / is open loop, 50 a second)')
  }
  if (report.nest) {
    console.log(`\nNestJS app (examples/nestjs), loadtest -n ${report.nest.requests} -c ${report.nest.concurrency} -k on /heavy (50,000,000 counted), GET / at 50/s beside it (${report.cpus} cores, ${report.node}); medians of ${report.nest.rounds} round(s), errors summed:`)
    console.log('| served as | total s | req/s | /heavy p50 ms | p90 | p99 | max | GET / p99 ms | errors | retries | attempt timeouts | total vs pm2 per round | /heavy p99 vs pm2 per round |')
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for (const r of report.nest.runs) console.log(`| ${r.name} | ${r.totalSeconds} | ${r.perSecond} | ${r.heavy.p50} | ${r.heavy.p90} | ${r.heavy.p99} | ${r.heavy.max} | ${r.cheapP99} | ${r.errors} | ${r.retries ?? '-'} | ${r.attemptTimeouts ?? '-'} | ${r.vsPm2.total}x | ${r.vsPm2.heavyP99}x |`)
  }
  if (report.post) {
    const p = report.post
    console.log(`\nThe blog post's app (GET / counts down from 1e7) at ${p.connections} connections for ${p.seconds} s, GET /cheap at 50/s beside it (${report.cpus} cores, ${report.node}); medians of ${p.rounds} round(s), errors summed:`)
    console.log('| served as | req/s | GET / p99 ms | GET /cheap p99 ms | errors |')
    console.log('| --- | ---: | ---: | ---: | ---: |')
    for (const r of p.runs) console.log(`| ${r.name} | ${r.perSecond} | ${r.heavyP99} | ${r.cheapP99} | ${r.errors} |`)
    console.log(`zeromesh / cluster per round: req/s ${p.zeromeshVsCluster.perSecond.join(', ')}; GET / p99 ${p.zeromeshVsCluster.heavyP99.join(', ')}`)
    console.log(`gateway / hand-written front per round: req/s ${p.gatewayVsFront.join(', ')}; median ${p.gatewayVsFrontMedian}`)
    for (const r of p.runs) for (const [i, e] of r.each.entries()) console.log(`CPU us per request, ${r.name}, round ${i + 1}: ${JSON.stringify(e.cpuUsPerRequest)}`)
  }
}
process.exit(0)
