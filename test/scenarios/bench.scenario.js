// `zeromesh bench --compare --json` measures zeromesh, raw zeromq.js and a broker in one run
// and prints one JSON object with req/s and p50/p99 for each.
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))

describe('zeromesh bench --compare --json', function () {
  this.timeout(60000)

  it('prints valid JSON with req/s and p50/p99 for zeromesh, raw zeromq.js (per message and coalesced) and the broker', async () => {
    const stdout = await new Promise((resolve, reject) => {
      execFile(process.execPath, [BIN, 'bench', '--compare', '--json', '--duration', '1', '--concurrency', '1,16'], { timeout: 50000 }, (err, out) => err ? reject(err) : resolve(out))
    })
    const report = JSON.parse(stdout)
    const systems = new Set(report.results.map((r) => r.system))
    expect([...systems]).to.deep.equal(['zeromesh', 'raw zeromq.js', 'raw zeromq.js, 32 per message', 'broker (zeromq Proxy, 2 workers)'])
    for (const r of report.results) {
      expect(r.rps).to.be.above(0)
      expect(r.p50).to.be.above(0)
      expect(r.p99).to.be.at.least(r.p50)
    }
    expect(report.ratios).to.have.length(6)
    console.log(`      ${report.results.map((r) => `${r.system} @${r.concurrency}: ${r.rps} req/s`).join('; ')}`)
  })
})
