// Subsetting in the whole-system simulation: 40 peers, 100 clients with a subset of 10. Each
// client connects to at most its subset; the clients' moves (client/rebalance.js, a round a
// second here) bring the busiest peer within 1.3x of the mean load, where random subsets left
// it at about 1.4x (the binomial); one peer's death moves only the connections that were to it,
// beside the moves the clients make on their own (counted, and told apart). (bench/cluster/subsets.js
// runs 1,000 x 1,000 with the default subset; sim/subset-model.js computes the spread exactly.)
import { expect } from 'chai'
import { SystemSim } from '../../sim/system.js'
import { connections, clientsPerPeer, quantile, loadPerPeer, binomialSpread } from '../../sim/subset-measure.js'
import { connectionsOf } from '../helpers/insides.js'
import { figure } from '../helpers/figures.js'

const PEERS = 40
const CLIENTS = 100
const SUBSET = 10

describe(`subsets (simulated: ${PEERS} peers, ${CLIENTS} clients, subset ${SUBSET})`, function () {
  this.timeout(120000)

  it('connections per client at most the subset; with the clients\' moves the busiest peer (p99) within 1.3x the mean load; a death moves at most 2% beyond its own and the moves', async () => {
    const s = new SystemSim({ seed: 4, peers: PEERS, clients: CLIENTS, inflight: 2, think: 20, client: { subset: SUBSET, refreshInterval: 1000, rebalanceInterval: 5000 } })
    const moves = () => s.clients.reduce((n, c) => n + c.stats().moves, 0)
    try {
      await s.start()
      s.pace(400) // the clients' moves ask peers' counts, not their load: a light load while they settle
      await s.run(40000)
      s.pace(20)
      const perClient = s.clients.map((c) => connectionsOf(c))
      expect(Math.max(...perClient), `connections per client: ${perClient.join(' ')}`).to.be.at.most(SUBSET)
      expect(Math.min(...perClient)).to.equal(SUBSET)

      const load = [...(await loadPerPeer(s, 3000)).values()]
      const mean = load.reduce((a, b) => a + b, 0) / load.length
      const p99 = quantile(load, 0.99)
      const expected = binomialSpread(CLIENTS, PEERS, SUBSET)
      const measured = quantile([...clientsPerPeer(s).values()], 0.99) / (CLIENTS * SUBSET / PEERS)
      figure(`load per peer: mean ${mean.toFixed(0)}, p99 ${p99} (${(p99 / mean).toFixed(2)}x); clients per peer p99 ${measured.toFixed(2)}x the mean, binomial(${CLIENTS}, ${SUBSET}/${PEERS}) predicts ${expected.ratio.toFixed(2)}x`)
      expect(p99 / mean).to.be.at.most(1.3)
      expect(moves()).to.be.above(0)
      expect(s.counts.failed, JSON.stringify(s.counts.errors)).to.equal(0)

      const before = connections(s)
      const dead = s.endpoints[7]
      const own = [...before].filter((k) => k.endsWith(`|${dead}`)).length
      const movesBefore = moves()
      s.kill(dead)
      await s.run(4000) // the full load through the death and a heartbeat timeout past it...
      s.pace(400)
      await s.run(4000) // ...then a light one while the connections settle
      const moved = moves() - movesBefore // the clients' own moves meanwhile: each drops one connection and makes one
      const after = connections(s)
      const dropped = [...before].filter((k) => !after.has(k))
      const added = [...after].filter((k) => !before.has(k))
      expect(dropped.filter((k) => !k.endsWith(`|${dead}`)).length - moved, 'connections dropped that were not to the dead peer, beyond the moves').to.be.at.most(Math.floor(0.02 * before.size))
      expect(added.length - own - moved, `${added.length} connections made for ${own} lost to the dead peer and ${moved} moves`).to.be.at.most(Math.floor(0.02 * before.size))
      figure(`a death: ${own} of ${before.size} connections were to the dead peer; ${dropped.length - own} others dropped (${moved} moves meanwhile), ${added.length} made`)
      expect(s.clients.every((c) => connectionsOf(c) <= SUBSET)).to.equal(true)
      expect(s.counts.failed, JSON.stringify(s.counts.errors)).to.equal(0)
    } finally {
      await s.stop()
    }
  })
})
