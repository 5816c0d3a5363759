// An HTTP API with a CPU-heavy route, the Node scaling tutorials' comparison. The API of
// examples/express (GET / cheap, GET /primes?limit=200000 about 12 ms of CPU) as one process,
// as node:cluster with one worker per core, and as Express + zeromesh (one peer with a thread
// per core; a peer per core of one thread each), each started cold and driven at once by
// autocannon: the heavy route at --connections in flight for --http-seconds, the cheap route at
// 50 requests a second beside it. Reports the heavy route's req/s, p50 and p99, the cheap
// route's p99, and every error (non-2xx answers, socket errors, timeouts), from the first
// request on. The server: bench/lib/http-server.js.
//
// Usage: node bench/work/http-api.js [--limit 200000] [--connections 100] [--http-seconds 10]
//        [--threads N] [--max-queue N] [--json]
// (--threads: cluster's workers and the peers' threads, default a thread per core;
// --max-queue: the zeromesh peers' queue, per peer; default the peer's)
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import autocannon from 'autocannon'
import { child } from '../../bin/bench/harness.js'
import { BIN, cheapRoute, stopped } from '../lib/apps.js'

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: String(os.availableParallelism()) },
    limit: { type: 'string', default: '200000' },
    connections: { type: 'string', default: '100' },
    'http-seconds': { type: 'string', default: '10' },
    'max-queue': { type: 'string' },
    json: { type: 'boolean' },
  },
})
const THREADS = Number(values.threads)
const SERVER = fileURLToPath(new URL('../lib/http-server.js', import.meta.url))
const HANDLERS = fileURLToPath(new URL('../../examples/express/handlers.js', import.meta.url))

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
  await stopped([server.child, ...started.map((p) => p.child)])
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

const runs = [
  await measureHttp('one process', 'single'),
  await measureHttp(`cluster x${THREADS}`, 'cluster'),
  await measureHttp(`zeromesh, 1 peer x ${THREADS} threads`, 'zeromesh', [THREADS]),
  await measureHttp(`zeromesh, ${THREADS} peers x 1 thread`, 'zeromesh', Array.from({ length: THREADS }, () => 1)),
]
const cl = runs[1]
const report = {
  date: new Date().toISOString(),
  cpus: os.availableParallelism(),
  node: process.version,
  limit: Number(values.limit),
  connections: Number(values.connections),
  seconds: Number(values['http-seconds']),
  runs: runs.map((r) => ({ ...r, vsCluster: { perSecond: +(r.perSecond / cl.perSecond).toFixed(2), heavyP99: +(r.heavyP99 / cl.heavyP99).toFixed(2) } })),
}

if (values.json) console.log(JSON.stringify(report))
else {
  console.log(`HTTP API, heavy route countPrimes(${report.limit}) at ${report.connections} connections for ${report.seconds} s, GET / at 50/s beside it (${report.cpus} cores, ${report.node}; peers' --max-queue ${values['max-queue'] ?? 'default'}):`)
  console.log('| served as | req/s | heavy p50 ms | heavy p99 ms | GET / p99 ms | errors | req/s vs cluster | heavy p99 vs cluster |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const r of report.runs) console.log(`| ${r.name} | ${r.perSecond} | ${r.heavyP50} | ${r.heavyP99} | ${r.cheapP99} | ${r.errors} | ${r.vsCluster.perSecond}x | ${r.vsCluster.heavyP99}x |`)
  console.log('(errors from the first request on: every server started cold; GET / is open loop, 50 a second)')
}
process.exit(0)
