// Serial load spreads over identical peers from a fresh client, with no warm-up (issue 60,
// item 3): a fresh connection's first answer (often slow: the peer's and the client's code not
// compiled yet) does not exile its peer from the balancer until its estimate goes stale.
// 400 requests one after another reach each of two and of three peers at least 20% of the
// time; in one process here, as peer processes in test/process/serial-spread.test.js.
import { expect } from 'chai'
import { harness } from '../helpers/cluster.js'
import { serialSpread } from '../helpers/load.js'

describe('serial load spreads from a fresh client (in process)', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(() => h.cleanup())

  for (const n of [2, 3]) {
    it(`400 serial requests over ${n} identical peers reach each at least 20% of the time`, async () => {
      const peers = []
      for (let i = 0; i < n; i++) peers.push(await h.peer({ handlers: { who: (args, ctx) => ctx.endpoint } }))
      const client = h.client({ seeds: peers.map((p) => p.endpoint), discover: false })
      const seen = await serialSpread(client, 'who', 400, (who) => who)
      for (const p of peers) expect(seen.get(p.endpoint) ?? 0, `${p.endpoint}: ${JSON.stringify([...seen])}`).to.be.at.least(80)
    })
  }
})
