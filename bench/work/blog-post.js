// The blog post's app (issue 68; bench/lib/post-server.js): a plain node:http server whose
// GET / counts down from 1e7 (about 5 ms of CPU), as node:cluster with one worker per core, and
// as the same server whose count runs on one zeromesh peer of a thread per core (the front and
// the peer in processes of their own; the peer's handlers: bench/lib/countdown-handlers.js),
// each started cold and driven by autocannon -c --connections -d --http-seconds, GET /cheap at
// 50 a second beside it; --rounds rounds, in turn. The same front written with zeromesh/http's
// gateway is a third way (post-server.js gateway), its per-round req/s ratio to the hand-written
// front beside; --ways picks which run. Reports the heavy route's req/s and p99, the cheap
// route's p99, errors, per-round ratios to cluster (and the gateway's to the front), and CPU per
// answered request by process and thread (from /proc: the front's main thread and its others,
// the peer's main thread, its handler threads and ZeroMQ's I/O threads; cluster's workers
// whole). With --against DIR (another checkout, say an issue's starting commit, its
// node_modules linked), the hand-written front and its peer run from DIR as one more way, in the
// same rounds: its req/s and its front's main-thread CPU per request beside this checkout's.
//
// Usage: node bench/work/blog-post.js [--connections 100] [--http-seconds 10] [--rounds 1] [--threads N]
//        [--ways cluster,zeromesh,gateway] [--against DIR] [--json]
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import autocannon from 'autocannon'
import { child } from '../../bin/bench/harness.js'
import { cheapRoute, inTurn, lowerMedian as med, stopped } from '../lib/apps.js'
import { threadStats } from '../lib/proc-threads.js'

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: String(os.availableParallelism()) },
    connections: { type: 'string', default: '100' },
    'http-seconds': { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    ways: { type: 'string', default: 'cluster,zeromesh,gateway' },
    against: { type: 'string' },
    json: { type: 'boolean' },
  },
})
const THREADS = Number(values.threads)
const HERE = fileURLToPath(new URL('../..', import.meta.url))
/** The checkout's own pieces: its CLI, its app's server, its handlers. */
const checkout = (root) => ({ bin: path.join(root, 'bin/zeromesh.js'), postServer: path.join(root, 'bench/lib/post-server.js'), countdown: path.join(root, 'bench/lib/countdown-handlers.js') })

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
async function measurePost (mode, root = HERE) {
  const at = checkout(root)
  const started = mode !== 'cluster' ? [await child([at.bin, 'peer', '--handlers', at.countdown, '--threads', String(THREADS), '--log-level', 'error'])] : []
  const server = await child([at.postServer, mode, mode === 'cluster' ? String(THREADS) : started[0].line])
  const base = `http://127.0.0.1:${server.line}`
  const front = server.child.pid
  const peerPid = started[0]?.child.pid
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
  await stopped([server.child, ...started.map((p) => p.child)])
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

const all = [[`cluster x${THREADS}`, 'cluster'], [`front + zeromesh, 1 peer x ${THREADS} threads`, 'zeromesh'], [`gateway (zeromesh/http) + zeromesh, 1 peer x ${THREADS} threads`, 'gateway']]
const asked = values.ways.split(',')
if (asked.some((w) => !all.some(([, m]) => m === w))) throw new Error('--ways takes cluster, zeromesh and gateway, comma-separated')
const ways = all.filter(([, m]) => asked.includes(m))
if (values.against !== undefined && !asked.includes('zeromesh')) throw new Error('--against compares the hand-written front: --ways must include zeromesh')
if (values.against !== undefined) ways.push([`front + zeromesh at ${values.against}`, 'zeromesh', path.resolve(values.against)])
const rounds = Number(values.rounds)
const got = await inTurn(ways, rounds, ([, mode, root]) => measurePost(mode, root))
const of = (mode) => got[ways.findIndex(([, m]) => m === mode)] ?? null
const perRound = (f, a, b, digits = 2) => a === null || b === null ? [] : a.map((run, r) => +(f(run) / f(b[r])).toFixed(digits))
const report = {
  date: new Date().toISOString(),
  cpus: os.availableParallelism(),
  node: process.version,
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
if (values.against !== undefined) {
  const other = got[ways.length - 1]
  report.againstOther = {
    perSecond: perRound((x) => x.perSecond, of('zeromesh'), other, 3),
    frontMainCpu: perRound((x) => x.cpuUsPerRequest.frontMain, of('zeromesh'), other, 3),
  }
}
report.gatewayVsFrontMedian = med(report.gatewayVsFront)

if (values.json) console.log(JSON.stringify(report))
else {
  const p = report
  console.log(`The blog post's app (GET / counts down from 1e7) at ${p.connections} connections for ${p.seconds} s, GET /cheap at 50/s beside it (${p.cpus} cores, ${p.node}); medians of ${p.rounds} round(s), errors summed:`)
  console.log('| served as | req/s | GET / p99 ms | GET /cheap p99 ms | errors |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const r of p.runs) console.log(`| ${r.name} | ${r.perSecond} | ${r.heavyP99} | ${r.cheapP99} | ${r.errors} |`)
  console.log(`zeromesh / cluster per round: req/s ${p.zeromeshVsCluster.perSecond.join(', ')}; GET / p99 ${p.zeromeshVsCluster.heavyP99.join(', ')}`)
  if (of('gateway') !== null) console.log(`gateway / hand-written front per round: req/s ${p.gatewayVsFront.join(', ')}; median ${p.gatewayVsFrontMedian}`)
  if (p.againstOther !== undefined) console.log(`this checkout / ${values.against} per round: req/s ${p.againstOther.perSecond.join(', ')}; front main-thread CPU per request ${p.againstOther.frontMainCpu.join(', ')}`)
  for (const r of p.runs) for (const [i, e] of r.each.entries()) console.log(`CPU us per request, ${r.name}, round ${i + 1}: ${JSON.stringify(e.cpuUsPerRequest)}`)
}
process.exit(0)
