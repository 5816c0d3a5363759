// CPU-bound requests (`spin`, a loop of n iterations) through zeromesh with 1 worker thread
// vs N, and through node:http + cluster (N processes) driven by autocannon, the usual way,
// all in one run: servers in child processes, clients at 2 requests in flight per thread.
// Usage: node bench/cpu.js [--n 15000000] [--seconds 8] [--threads 2] [--inflight N] [--json]
// (--inflight: requests in flight for every measurement; default 2 per thread)
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import autocannon from 'autocannon'
import { Client } from '../index.js'

const { values } = parseArgs({ options: { n: { type: 'string', default: '15000000' }, seconds: { type: 'string', default: '8' }, threads: { type: 'string', default: String(os.availableParallelism()) }, inflight: { type: 'string' }, json: { type: 'boolean' } } })
const N = Number(values.n)
const SECONDS = Number(values.seconds)
const THREADS = Number(values.threads)
const BIN = fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url))

const children = []
process.on('exit', () => { for (const c of children) try { process.kill(c.pid, 'SIGKILL') } catch {} })

function peer (threads) {
  // Room to queue everything in flight: a bench counts work done, not refusals.
  const queue = Math.max(64 * threads, Number(values.inflight ?? 0))
  const c = spawn(process.execPath, [BIN, 'peer', '--threads', String(threads), '--max-queue', String(queue)], { stdio: ['ignore', 'pipe', 'ignore'] })
  children.push(c)
  return new Promise((resolve) => c.stdout.once('data', (d) => resolve({ c, endpoint: d.toString().trim() })))
}

async function measure (threads) {
  const { c, endpoint } = await peer(threads)
  const client = new Client({ seeds: [endpoint], timeout: 60000, discover: false })
  await client.request('spin', { n: 1000 })
  const concurrency = values.inflight === undefined ? threads * 2 : Number(values.inflight) // keep every thread fed
  const t0 = Date.now()
  let done = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() - t0 < SECONDS * 1000) { await client.request('spin', { n: N }); done++ }
  }))
  const secs = (Date.now() - t0) / 1000
  await client.close()
  c.kill('SIGTERM')
  return { threads, requests: done, perSecond: +(done / secs).toFixed(2) }
}

async function measureHttpCluster (workers) {
  const server = fileURLToPath(new URL('./http-cluster-server.js', import.meta.url))
  const c = spawn(process.execPath, [server, String(workers), String(N)], { stdio: ['ignore', 'pipe', 'ignore'] })
  children.push(c)
  const port = await new Promise((resolve) => c.stdout.once('data', (d) => resolve(d.toString().trim())))
  const result = await autocannon({ url: `http://127.0.0.1:${port}/`, connections: values.inflight === undefined ? workers * 2 : Number(values.inflight), duration: SECONDS })
  c.kill('SIGTERM')
  return { workers, requests: result.requests.total, perSecond: +(result.requests.total / SECONDS).toFixed(2) }
}

const one = await measure(1)
const many = await measure(THREADS)
const httpCluster = await measureHttpCluster(THREADS)
const report = {
  date: new Date().toISOString(),
  cpus: os.availableParallelism(),
  n: N,
  seconds: SECONDS,
  one,
  many,
  ratio: +(many.perSecond / one.perSecond).toFixed(2),
  httpCluster,
  zeromeshVsHttpCluster: +(many.perSecond / httpCluster.perSecond).toFixed(2),
}
console.log(JSON.stringify(report, null, values.json ? 0 : 2))
process.exit(0)
