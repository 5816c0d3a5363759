// Crash-safe defaults (issue 68, item 1): the seed's crash loop, three runs. Two `zeromesh
// peer` processes of one thread serving a ~5 ms handler, each SIGKILLed 1-3 s after it starts
// and restarted by a supervisor loop; an HTTP front calling them through a Client with default
// options; a CPU-bound process beside them; autocannon at 200 connections for 10 s
// (bench/work/crash-loop.js, which kills everything it started). Every request is idempotent:
// none may fail.
import { expect } from 'chai'
import { crashLoopRun } from '../../bench/work/crash-loop.js'

const RUNS = 3

describe('peers crashing every 1-3 s under load, with the defaults', function () {
  this.timeout(RUNS * 60000)

  it(`${RUNS} runs of 10 s at 200 connections beside a CPU-bound process: 0 failed requests`, async () => {
    const runs = []
    for (let i = 0; i < RUNS; i++) {
      const run = await crashLoopRun()
      console.log(`      run ${i + 1}: ${JSON.stringify(run)}`)
      expect(run.crashes, 'peers were killed').to.be.at.least(5)
      expect(run.requests, 'requests were served').to.be.above(200)
      runs.push(run)
    }
    expect(runs.map((r) => r.failed)).to.deep.equal(runs.map(() => 0))
  })
})
