// Deadlines kept in a burst (issue 68, item 5): 2,000 requests at once, each with a 1 s
// deadline, at a `zeromesh peer` of 2 threads serving a ~5 ms handler (ten times what fits in
// the deadline), with a CPU-bound process beside it, ten times. Every call settles (answered,
// BUSY once it cannot start in time, or TIMEOUT) by its deadline plus 50 ms.
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { startPeer, runScript, killAll } from '../helpers/processes.js'
import { Client } from '../../index.js'

const HANDLERS = fileURLToPath(new URL('../../bench/lib/countdown-handlers.js', import.meta.url))
const SPIN = fileURLToPath(new URL('../../bench/lib/spin-forever.js', import.meta.url))
const RUNS = 10
const BURST = 2000
const DEADLINE_MS = 1000
const GRACE_MS = 50

describe('deadlines in a burst, beside a CPU-bound process', function () {
  this.timeout(120000)
  after(killAll)

  it(`${RUNS} bursts of ${BURST} calls with a ${DEADLINE_MS} ms deadline: each settles within ${GRACE_MS} ms of it`, async () => {
    runScript(SPIN, [])
    const peer = await startPeer(['--handlers', HANDLERS, '--threads', '2', '--log-level', 'error'], { demo: false })
    const c = new Client({ seeds: [peer.endpoint] })
    const lateness = []
    const outcomes = {}
    try {
      await c.request('countdown', null)
      for (let r = 0; r < RUNS; r++) {
        await Promise.all(Array.from({ length: BURST }, async () => {
          const start = performance.now()
          let code = 'ok'
          try { await c.request('countdown', null, { timeout: DEADLINE_MS }) } catch (err) { code = err.code }
          outcomes[code] = (outcomes[code] ?? 0) + 1
          lateness.push(performance.now() - start - DEADLINE_MS)
        }))
      }
    } finally {
      await c.close()
    }
    lateness.sort((a, b) => a - b)
    const late = lateness.filter((x) => x > GRACE_MS).length
    console.log(`      ${JSON.stringify(outcomes)}; past the deadline: p99 ${lateness[Math.floor(lateness.length * 0.99)].toFixed(1)} ms, max ${lateness.at(-1).toFixed(1)} ms, ${late} later than ${GRACE_MS} ms`)
    expect(late).to.equal(0)
  })
})
