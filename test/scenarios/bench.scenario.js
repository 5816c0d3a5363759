// `zeromesh bench --compare --json` measures zeromesh, raw zeromq.js and a broker in one run
// and prints one JSON object with req/s and p50/p99 for each.
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import { eventually } from '../helpers/eventually.js'

const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const BROKER = fileURLToPath(new URL('../../bin/bench/broker.js', import.meta.url))

/** Pids of processes running this checkout's bin/bench/broker.js (the broker or its workers). */
function brokers () {
  const out = []
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try { if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(BROKER)) out.push(Number(pid)) } catch {}
  }
  return out
}

describe('zeromesh bench --compare --json', function () {
  this.timeout(60000)

  it('prints valid JSON with req/s and p50/p99 for zeromesh, raw zeromq.js (per message, coalesced, packed per frame with and without MessagePack) and the broker, and leaves no process behind', async () => {
    const before = new Set(brokers())
    const stdout = await new Promise((resolve, reject) => {
      execFile(process.execPath, [BIN, 'bench', '--compare', '--json', '--duration', '1', '--concurrency', '1,16'], { timeout: 50000 }, (err, out) => err ? reject(err) : resolve(out))
    })
    const report = JSON.parse(stdout)
    const systems = new Set(report.results.map((r) => r.system))
    expect([...systems]).to.deep.equal(['zeromesh', 'raw zeromq.js', 'raw zeromq.js, 32 per message', 'raw zeromq.js, 32 per frame, non-blocking', 'raw + msgpackr both ends, 32 per frame', 'broker (zeromq Proxy, 2 workers)'])
    for (const r of report.results) {
      expect(r.rps).to.be.above(0)
      expect(r.p50).to.be.above(0)
      expect(r.p99).to.be.at.least(r.p50)
    }
    expect(report.ratios).to.have.length(10) // zeromesh against each of the 5 others, at 2 concurrencies
    // Workers see their broker gone within moments.
    await eventually(() => expect(brokers().filter((pid) => !before.has(pid))).to.deep.equal([]), { timeout: 3000 })
    console.log(`      ${report.results.map((r) => `${r.system} @${r.concurrency}: ${r.rps} req/s`).join('; ')}`)
  })
})
