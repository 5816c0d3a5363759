// One client process of bench/work/fair.js and test/scenarios/fair.scenario.js: calls `spin`
// ({ n }) on SEEDS for SECONDS, either greedy (CONCURRENCY calls always in flight) or modest
// (one call at a time, GAP ms between calls), and prints { calls, rps, p50, p99, errors,
// retries, attemptTimeouts, waited (calls refused busy everywhere that waited for a place), latencies } as one JSON line: the latencies (ms) of every call, from
// the first (sorted).
//   node bench/lib/fair-client.js SEEDS greedy CONCURRENCY SECONDS N
//   node bench/lib/fair-client.js SEEDS modest GAP SECONDS N
import { Client } from '../../index.js'

const [seeds, mode, arg, seconds, n] = process.argv.slice(2)
const client = new Client({ seeds, timeout: 30000 })
const want = seeds.split(',').length
for (let i = 0; i < 200 && client.peers().filter((p) => p.state === 'up' && p.service !== null).length < want; i++) await new Promise((resolve) => setTimeout(resolve, 10))
const latencies = []
let errors = 0
const end = Date.now() + Number(seconds) * 1000
const one = async () => {
  const t = performance.now()
  try {
    await client.request('spin', { n: Number(n) })
    latencies.push(performance.now() - t)
  } catch {
    errors++
  }
}
const t0 = Date.now()
if (mode === 'greedy') {
  await Promise.all(Array.from({ length: Number(arg) }, async () => { while (Date.now() < end) await one() }))
} else {
  while (Date.now() < end) {
    await one()
    await new Promise((resolve) => setTimeout(resolve, Number(arg)))
  }
}
const secs = (Date.now() - t0) / 1000
latencies.sort((a, b) => a - b)
const q = (p) => latencies.length === 0 ? null : +latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(1)
const s = client.stats()
process.stdout.write(JSON.stringify({ calls: latencies.length, rps: +(latencies.length / secs).toFixed(1), p50: q(0.5), p99: q(0.99), errors, retries: s.retries, attemptTimeouts: s.attemptTimeouts, waited: s.waited, latencies: latencies.map((x) => +x.toFixed(1)) }) + '\n')
await client.close()
