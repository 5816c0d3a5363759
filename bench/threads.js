// Small requests through a peer's worker threads: what a hand-off to a thread costs, and what
// the peer's main thread does meanwhile. The peer runs in this process (so its main thread
// can be measured: event-loop utilisation, and the process's CPU time over all its
// threads); the client is a child process (bench/client-process.js) driving `echo` at the
// given requests in flight. Each configuration is measured in turn, rounds alternating:
// threads 0 (echo on the main thread, no hand-off) and each thread count given.
// Usage: node bench/threads.js [--threads 1,2] [--concurrency 256] [--seconds 3] [--rounds 3]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { Peer } from '../index.js'

const { values } = parseArgs({ options: { threads: { type: 'string', default: '1,2' }, concurrency: { type: 'string', default: '256' }, seconds: { type: 'string', default: '3' }, rounds: { type: 'string', default: '3' } } })
const configs = [0, ...values.threads.split(',').map(Number)]
const HANDLERS = fileURLToPath(new URL('../demo/handlers.js', import.meta.url))
const CLIENT = fileURLToPath(new URL('./client-process.js', import.meta.url))

const children = new Set()
process.on('exit', () => { for (const c of children) try { process.kill(c.pid, 'SIGKILL') } catch {} })

async function once (threads) {
  const peer = new Peer({ bind: 'tcp://127.0.0.1:*', handlers: HANDLERS, threads, maxQueue: 4096 })
  await peer.start()
  const c = spawn(process.execPath, [CLIENT, peer.endpoint, values.concurrency, values.seconds], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(c)
  let out = ''
  c.stdout.setEncoding('utf8').on('data', (d) => { out += d })
  // The client warms up for 500 ms (harness.js drive): measure the peer from then on.
  await new Promise((resolve) => setTimeout(resolve, 700))
  const elu0 = performance.eventLoopUtilization()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const pool0 = peer.stats().threads
  await new Promise((resolve) => setTimeout(resolve, Number(values.seconds) * 1000 - 400))
  const elu = performance.eventLoopUtilization(elu0).utilization
  const cpu = process.cpuUsage(cpu0)
  const cores = (cpu.user + cpu.system) / 1000 / (performance.now() - t0)
  const pool1 = peer.stats().threads
  await new Promise((resolve) => c.on('exit', resolve))
  children.delete(c)
  peer.options.drainTimeout = 0
  await peer.stop()
  const r = JSON.parse(out.trim().split('\n').pop())
  const handoffs = pool1 === null ? null : pool1.handoffs - pool0.handoffs
  return { rps: r.rps, p50: r.p50, p99: r.p99, mainThread: elu, cores, perHandoff: handoffs ? (pool1.ran - pool0.ran) / handoffs : null }
}

const results = new Map(configs.map((t) => [t, []]))
for (let r = 0; r < Number(values.rounds); r++) {
  for (const t of r % 2 === 0 ? configs : [...configs].reverse()) results.get(t).push(await once(t))
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`echo at ${values.concurrency} in flight, ${values.seconds} s x ${values.rounds} rounds (medians); peer in this process, client in a child`)
console.log('| threads | req/s | p50 ms | p99 ms | peer main thread busy | peer CPU (cores) | requests per hand-off |')
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const [t, rs] of results) {
  const m = (k) => median(rs.map((x) => x[k]))
  console.log(`| ${t === 0 ? '0 (main thread)' : t} | ${Math.round(m('rps')).toLocaleString('en-US')} | ${m('p50')} | ${m('p99')} | ${(100 * m('mainThread')).toFixed(0)}% | ${m('cores').toFixed(2)} | ${t === 0 || m('perHandoff') === null ? '' : m('perHandoff').toFixed(1)} |`)
}
process.exit(0)
