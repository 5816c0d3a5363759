// Clients sharing busy peers (issue 60), with real processes:
//   1. three client processes (bench/lib/fair-client.js) on two peers of one thread and
//      --max-queue 16: one keeps 64 calls of ~30 ms in flight, two call once at a time with
//      50 ms between calls. Beside the greedy one the modest clients' calls keep their p99
//      within 3x of a modest client's alone (it was 9x: first come first served, the greedy
//      client refilling each freed place) and most of their rate; nothing fails.
//   2. a saturated peer, then a frozen one: 400 calls at once on two peers of 2 threads give
//      0 attempt timeouts and 0 retries (calls waiting their turn are not re-sent); then one
//      peer is frozen (SIGSTOP) with 400 more in flight, and every call completes on the other.
// bench/work/fair.js measures the first with the greedy client alone too (bench/RESULTS.md).
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { startPeer, runScript, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'

const CLIENT = fileURLToPath(new URL('../../bench/lib/fair-client.js', import.meta.url))
const N = '2000000' // spin: ~30 ms on these machines

async function clientRun (seeds, mode, arg, seconds) {
  const c = runScript(CLIENT, [seeds, mode, String(arg), String(seconds), N])
  const { code } = await c.exited
  expect(code, c.stderr).to.equal(0)
  return JSON.parse(c.stdout.trim().split('\n').pop())
}

describe('clients sharing busy peers (processes)', function () {
  this.timeout(120000)
  const h = harness()
  afterEach(async () => { await h.cleanup(); await killAll() })

  it('modest clients beside a greedy one keep their p99 within 3x of alone, and nothing fails', async () => {
    const a = await startPeer(['--threads', '1', '--max-queue', '16'])
    const b = await startPeer(['--threads', '1', '--max-queue', '16', '--seeds', a.endpoint])
    const seeds = `${a.endpoint},${b.endpoint}`
    // Enough calls that a p99 is not the one slowest: about 120 alone, and the two modest
    // clients' 230 together (over 6 and 8 s, the p99 of ~60 calls was their maximum, and one
    // slow call in 60 put a run past 3x: 1 in 9 runs, before and after 2026-11-29's changes).
    const alone = await clientRun(seeds, 'modest', 50, 12)
    const [greedy, m1, m2] = await Promise.all([clientRun(seeds, 'greedy', 64, 16), clientRun(seeds, 'modest', 50, 16), clientRun(seeds, 'modest', 50, 16)])
    const together = [...m1.latencies, ...m2.latencies].sort((x, y) => x - y)
    const p99 = together[Math.floor(together.length * 0.99)]
    console.log(`      modest alone ${alone.rps}/s p99 ${alone.p99} ms (${alone.calls} calls); beside the greedy one ${m1.rps}/s and ${m2.rps}/s, p99 ${p99} ms (${together.length} calls; each ${m1.p99} and ${m2.p99} ms; p50 ${m1.p50} and ${m2.p50}; waited ${m1.waited} and ${m2.waited}); greedy ${greedy.rps}/s`)
    expect(p99).to.be.at.most(3 * alone.p99)
    for (const m of [m1, m2]) {
      expect(m.errors).to.equal(0)
      expect(m.rps).to.be.at.least(0.5 * alone.rps) // it was 0.12-0.16x; bench/RESULTS.md has the ratios
    }
    expect(greedy.errors).to.equal(0)
    expect(greedy.rps).to.be.above(10) // the rest of the peers' work is its
  })

  it('a saturated peer, then a frozen one: 400 calls at once give 0 attempt timeouts and 0 retries; frozen with 400 in flight, every call completes on the other peer', async () => {
    const a = await startPeer(['--threads', '2', '--max-queue', '512'])
    const b = await startPeer(['--threads', '2', '--max-queue', '512', '--seeds', a.endpoint])
    const c = h.client({ seeds: [a.endpoint, b.endpoint], timeout: 60000 })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(2))
    for (let i = 0; i < 8; i++) await c.request('spin', { n: 1000000 }) // the method's latency is known: 'auto' attempt timeouts apply
    const burst = () => Promise.all(Array.from({ length: 400 }, () => c.request('spin', { n: 1000000 })))
    expect(await burst()).to.have.length(400)
    expect(c.stats()).to.include({ attemptTimeouts: 0, retries: 0 })
    const second = burst()
    await eventually(() => expect(c.peers().find((p) => p.endpoint === a.endpoint).inflight).to.be.above(50))
    process.kill(a.pid, 'SIGSTOP')
    try {
      expect(await second).to.have.length(400)
      expect(c.stats().failed).to.deep.equal({})
    } finally {
      process.kill(a.pid, 'SIGCONT')
    }
  })
})
