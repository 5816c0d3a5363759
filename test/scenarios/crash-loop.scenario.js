// Crash-safe defaults (issue 68, item 1): the seed's crash loop, three runs. Two `zeromesh
// peer` processes of one thread serving a ~5 ms handler, each SIGKILLed 1-3 s after it starts
// and restarted by a supervisor loop; an HTTP front calling them through a Client with default
// options; a CPU-bound process beside them; autocannon at 200 connections for 10 s
// (bench/work/crash-loop.js, which kills everything it started). Every request is idempotent:
// none may fail. The handler counts down from what takes about 5 ms on this machine, measured
// before each run (bench/lib/countdown-handlers.js): these VMs' speed varies from minute to
// minute (1e7 took 6.4 ms one hour and 8-14 ms the next, when the two peers served half as
// many requests and calls waited past the 5 s deadline: bench/RESULTS.md).
import { expect } from 'chai'
import { crashLoopRun } from '../../bench/work/crash-loop.js'
import { countdownFor } from '../../bench/lib/countdown-handlers.js'

const RUNS = 3
const HANDLER_MS = 5

describe('peers crashing every 1-3 s under load, with the defaults', function () {
  this.timeout(RUNS * 60000)

  it(`${RUNS} runs of 10 s at 200 connections beside a CPU-bound process, a ${HANDLER_MS} ms handler: 0 failed requests`, async () => {
    const runs = []
    for (let i = 0; i < RUNS; i++) {
      const { from, msPer1e7 } = countdownFor(HANDLER_MS)
      const run = await crashLoopRun({ countdownFrom: from })
      console.log(`      run ${i + 1} (1e7 takes ${msPer1e7.toFixed(2)} ms here now: counting down from ${from}): ${JSON.stringify(run)}`)
      expect(run.crashes, 'peers were killed').to.be.at.least(5)
      expect(run.requests, 'requests were served').to.be.above(200)
      runs.push(run)
    }
    expect(runs.map((r) => r.failed)).to.deep.equal(runs.map(() => 0))
  })
})
