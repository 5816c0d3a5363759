// CPU-bound work on threads, servers in child processes: requests of `spin` (a loop of n
// iterations) through zeromesh with 1 worker thread against N, through N separate peers of 1
// thread each, and, beside them in the same rounds, through raw zeromq.js: 1 worker process
// against N (bench/lib/raw-spin-worker.js, a bare ROUTER each, behind one DEALER), at 2 requests
// in flight per thread (or --inflight). Each counts the answers within the same window after a
// warm-up; zeromesh's say where the CPU went in that window (per request: the peers' worker
// threads, main threads, ZeroMQ I/O threads, other threads, and the client), from /proc. The
// machine moves what N workers give over 1, so zeromesh's N threads over 1 is read against raw's
// N workers over 1 of the same round (`threadsVsRaw`), as medians over the rounds.
//
// Usage: node bench/work/threads.js [--n 15000000] [--seconds 8] [--threads N] [--inflight N] [--rounds 1] [--json]
// (--threads: default a thread per core; --inflight: requests in flight for every measurement,
// default 2 per thread)
import { parseArgs } from 'node:util'
import os from 'node:os'
import * as zmq from 'zeromq'
import { Client } from '../../index.js'
import { child, median } from '../../bin/bench/harness.js'
import { BIN, sleep } from '../lib/apps.js'
import { threadStats } from '../lib/proc-threads.js'

const RAW_WORKER = new URL('../lib/raw-spin-worker.js', import.meta.url).pathname

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '15000000' },
    seconds: { type: 'string', default: '8' },
    threads: { type: 'string', default: String(os.availableParallelism()) },
    inflight: { type: 'string' },
    rounds: { type: 'string', default: '1' },
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
 * Keeps `concurrency` calls of `one()` going; after a 1 s warm-up, counts the answers that come
 * within SECONDS, calling `window.start()` as it opens and `window.end(done)` as it closes (its
 * result is returned beside the count); then `close()` ends the calls still going.
 */
async function counted (concurrency, one, close, window = { start () {}, end () { return {} } }) {
  let counting = false
  let done = 0
  const loops = Array.from({ length: concurrency }, async () => {
    try {
      for (;;) { await one(); if (counting) done++ }
    } catch { /* closed at the end */ }
  })
  await sleep(1000)
  counting = true
  const t0 = performance.now()
  window.start()
  await sleep(SECONDS * 1000)
  counting = false
  const secs = (performance.now() - t0) / 1000
  const seen = window.end(done)
  await close()
  await Promise.all(loops)
  return { requests: done, perSecond: +(done / secs).toFixed(2), ...seen }
}

const defaultInflight = (threads) => values.inflight === undefined ? Math.max(1, threads) * 2 : Number(values.inflight)

/** Requests answered per second by `peers` (one per element: its --threads), driven by one client at `concurrency` in flight. */
async function measure (threads, peers = [threads], concurrency = defaultInflight(threads)) {
  const started = await Promise.all(peers.map((t) => peer(t)))
  const client = new Client({ seeds: started.map((p) => p.endpoint), timeout: 600000, discover: false })
  await Promise.all(started.map((p) => client.request('spin', { n: 1000 })))
  let before, cpu0
  const out = await counted(concurrency, () => client.request('spin', { n: N }), () => client.close(), {
    start () { before = started.map((p) => threadStats(p.c.pid)); cpu0 = process.cpuUsage() },
    end (done) {
      const after = started.map((p) => threadStats(p.c.pid))
      const cpu = process.cpuUsage(cpu0)
      return account(started, before, after, (cpu.user + cpu.system) / 1000, done)
    },
  })
  for (const p of started) p.c.kill('SIGKILL')
  return { threads, peers: peers.length, ...out }
}

/** The same through raw zeromq.js: `workers` processes of one thread (raw-spin-worker.js), one DEALER connected to them all. */
async function measureRaw (workers, concurrency = defaultInflight(workers)) {
  const started = await Promise.all(Array.from({ length: workers }, () => child([RAW_WORKER])))
  const sock = new zmq.Dealer({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  for (const w of started) sock.connect(w.line)
  const pending = new Map() // id -> [resolve, reject]
  let nextId = 0
  ;(async () => {
    try {
      for await (const [id] of sock) { const k = id.readUInt32LE(0); pending.get(k)?.[0](); pending.delete(k) }
    } catch { /* closed */ }
  })()
  const ask = (n) => new Promise((resolve, reject) => {
    const id = Buffer.allocUnsafe(4)
    const k = nextId++ >>> 0
    id.writeUInt32LE(k)
    pending.set(k, [resolve, reject])
    sock.send([id, JSON.stringify({ n })]).catch(reject)
  })
  await Promise.all(started.map(() => ask(1000)))
  const out = await counted(concurrency, () => ask(N), () => {
    sock.close()
    for (const [, [, reject]] of pending) reject(new Error('closed'))
    pending.clear()
  })
  for (const w of started) w.child.kill('SIGKILL')
  return { workers, ...out }
}

// The handler alone: spin(N) in this process, warm, on an otherwise idle machine.
const { spin } = await import('../../demo/handlers.js')
for (let i = 0; i < 50; i++) spin({ n: N })
const h0 = process.cpuUsage()
for (let i = 0; i < 200; i++) spin({ n: N })
const h = process.cpuUsage(h0)
const rounds = []
for (let r = 0; r < Number(values.rounds); r++) {
  // zeromesh and raw in turn, which goes first alternating by round (the machine drifts)
  const zeromesh = async () => {
    const one = await measure(1)
    const many = await measure(THREADS)
    // THREADS separate peers of 1 thread each, at the same total in flight: threads against processes.
    const peers = await measure(1, Array.from({ length: THREADS }, () => 1), values.inflight === undefined ? THREADS * 2 : Number(values.inflight))
    return { one, many, peers }
  }
  const raw = async () => ({ rawOne: await measureRaw(1), rawMany: await measureRaw(THREADS) })
  const [a, b] = r % 2 === 0 ? [await zeromesh(), await raw()] : [await raw(), await zeromesh()]
  const m = { ...a, ...b }
  const ratio = m.many.perSecond / m.one.perSecond
  const rawRatio = m.rawMany.perSecond / m.rawOne.perSecond
  rounds.push({ ...m, ratio: +ratio.toFixed(2), threadsVsPeers: +(m.many.perSecond / m.peers.perSecond).toFixed(2), rawRatio: +rawRatio.toFixed(2), threadsVsRaw: +(ratio / rawRatio).toFixed(2) })
}
const med = (k) => +median(rounds.map((x) => x[k])).toFixed(2)
const report = {
  date: new Date().toISOString(),
  cpus: os.availableParallelism(),
  node: process.version,
  n: N,
  seconds: SECONDS,
  handlerUs: +((h.user + h.system) / 200).toFixed(1), // CPU us of one spin(N) alone
  rounds,
  // medians over the rounds: N threads / 1 thread, N threads / N peers, raw's N workers / 1, and zeromesh's ratio over raw's
  ratio: med('ratio'),
  threadsVsPeers: med('threadsVsPeers'),
  rawRatio: med('rawRatio'),
  threadsVsRaw: med('threadsVsRaw'),
}
console.log(values.json ? JSON.stringify(report) : JSON.stringify(report, null, 2))
process.exit(0)
