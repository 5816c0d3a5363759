// The NestJS tutorial's own case. The app of examples/nestjs (GET / cheap, GET /heavy counting
// to 50,000,000) as one process, under pm2 cluster mode with one instance per core, and as a
// gateway + a zeromesh microservice of a thread per core (zeromesh/nest), each started cold
// and driven by the tutorial's command, `loadtest -n 1200 -c 400 -k` (in a process of its own:
// bench/lib/loadtest-run.js), with GET / at 50 a second beside it; --rounds rounds, the three
// ways in turn, rotated each round. Reports the total time, req/s, /heavy's p50, p90, p99 and
// max, GET /'s p99 under that load, errors, the gateway's zeromesh client retries and attempt
// timeouts (medians over the rounds, errors summed), and per-round ratios to pm2. The app is
// built first (bench/lib/nest-example.js).
//
// Usage: node bench/work/nest.js [--rounds 1] [--requests 1200] [--concurrency 400] [--threads N] [--json]
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import { cheapRoute, inTurn, lowerMedian as med, sleep } from '../lib/apps.js'

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: String(os.availableParallelism()) },
    requests: { type: 'string', default: '1200' },
    concurrency: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean' },
  },
})
const THREADS = Number(values.threads)
const LOADTEST = fileURLToPath(new URL('../lib/loadtest-run.js', import.meta.url))
const PM2 = fileURLToPath(new URL('../../node_modules/pm2/bin/pm2', import.meta.url))

const children = new Set()
process.on('exit', () => { for (const c of children) try { process.kill(c.pid, 'SIGKILL') } catch {} })

/** Runs node with `args` to its end; resolves with its stdout, rejects with its stderr. */
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
  children.add(c)
  c.on('exit', () => children.delete(c))
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

const { buildNestExample } = await import('../lib/nest-example.js')
const built = await buildNestExample()
const ways = [['one process', 'single'], [`pm2 -i ${THREADS}`, 'pm2'], [`gateway + zeromesh, 1 peer x ${THREADS} threads`, 'zeromesh']]
const rounds = Number(values.rounds)
const got = await inTurn(ways, rounds, ([name, mode]) => measureNest(name, mode, built.dist))
await built.remove()
const ratio = (i, f) => got[i].map((run, r) => f(run) / f(got[1][r]))
const fmt = (xs) => `${med(xs).toFixed(2)}${xs.length > 1 ? ` (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})` : ''}`
const report = {
  date: new Date().toISOString(),
  cpus: os.availableParallelism(),
  node: process.version,
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

if (values.json) console.log(JSON.stringify(report))
else {
  console.log(`NestJS app (examples/nestjs), loadtest -n ${report.requests} -c ${report.concurrency} -k on /heavy (50,000,000 counted), GET / at 50/s beside it (${report.cpus} cores, ${report.node}); medians of ${report.rounds} round(s), errors summed:`)
  console.log('| served as | total s | req/s | /heavy p50 ms | p90 | p99 | max | GET / p99 ms | errors | retries | attempt timeouts | total vs pm2 per round | /heavy p99 vs pm2 per round |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const r of report.runs) console.log(`| ${r.name} | ${r.totalSeconds} | ${r.perSecond} | ${r.heavy.p50} | ${r.heavy.p90} | ${r.heavy.p99} | ${r.heavy.max} | ${r.cheapP99} | ${r.errors} | ${r.retries ?? '-'} | ${r.attemptTimeouts ?? '-'} | ${r.vsPm2.total}x | ${r.vsPm2.heavyP99}x |`)
}
process.exit(0)
