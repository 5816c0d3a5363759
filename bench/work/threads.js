// CPU-bound work on threads, servers in child processes: requests of `spin` (a loop of n
// iterations) through zeromesh with 1 worker thread against N, and through N separate peers
// of 1 thread each, at 2 requests in flight per thread (or --inflight). Each counts the answers
// within the same window after a warm-up, and says where the CPU went in that window (per
// request: the peers' worker threads, main threads, ZeroMQ I/O threads, other threads, and the
// client), from /proc.
//
// Usage: node bench/work/threads.js [--n 15000000] [--seconds 8] [--threads N] [--inflight N] [--json]
// (--threads: default a thread per core; --inflight: requests in flight for every measurement,
// default 2 per thread)
import { parseArgs } from 'node:util'
import os from 'node:os'
import { Client } from '../../index.js'
import { child } from '../../bin/bench/harness.js'
import { BIN, sleep } from '../lib/apps.js'
import { threadStats } from '../lib/proc-threads.js'

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '15000000' },
    seconds: { type: 'string', default: '8' },
    threads: { type: 'string', default: String(os.availableParallelism()) },
    inflight: { type: 'string' },
    json: { type: 'boolean' },
  },
})
const N = Number(values.n)
const SECONDS = Number(values.seconds)
const THREADS = Number(values.threads)

async function peer (threads) {
  // Room to queue everything in flight: a bench counts work done, not refusals.
  const queue = Math.max(64 * Math.max(1, threads), Number(values.inflight ?? 0))
  const { child: c, line } = await child([BIN, 'peer', '--demo-handlers', '--threads', String(threads), '--max-queue', String(queue)])
  return { c, threads, endpoint: line }
}

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
const report = {
  date: new Date().toISOString(),
  cpus: os.availableParallelism(),
  node: process.version,
  n: N,
  seconds: SECONDS,
  handlerUs: +((h.user + h.system) / 200).toFixed(1), // CPU us of one spin(N) alone
  one,
  many,
  ratio: +(many.perSecond / one.perSecond).toFixed(2),
  peers,
  threadsVsPeers: +(many.perSecond / peers.perSecond).toFixed(2),
}
console.log(values.json ? JSON.stringify(report) : JSON.stringify(report, null, 2))
process.exit(0)
