// Even load at 1,000 peers x 1,000 clients with the default subset (32), computed exactly
// (sim/subset-model.js: the clients' real Roster and crowded(), exact counts). Random subsets
// leave the busiest peer at 1.6-1.75x the mean (the binomial's tail; p99 1.41x); the clients' moves
// (client/rebalance.js) bring it within 1.25x in a few rounds and then nearly stop; a member's
// death moves only the connections that were to it (the whole-system simulation moved 26
// others at this size before the moves: bench/RESULTS.md).
import { expect } from 'chai'
import { SubsetModel } from '../../sim/subset-model.js'
import { clientDefaults } from '../../client/options.js'

describe('subsets at 1,000 x 1,000: the spread of load, computed exactly', function () {
  this.timeout(60000)

  for (const seed of [1, 2]) {
    it(`seed ${seed}: the busiest peer within 1.25x of the mean after 3 rounds of moves (random subsets: 1.6-1.75x), and a death moves no other connection`, () => {
      const t0 = Date.now()
      const m = new SubsetModel({ members: 1000, clients: 1000, subset: clientDefaults.subset, seed })
      const random = m.spread()
      const moves = [m.round(), m.round(), m.round()]
      const even = m.spread()
      for (let i = 0; i < 5; i++) moves.push(m.round())
      const death = m.kill(m.endpoints[7])
      const after = m.round()
      console.log(`      random subsets: busiest ${random.max.toFixed(2)}x the mean, p99 ${random.p99.toFixed(2)}x; after 3 rounds ${even.max.toFixed(2)}x, p99 ${even.p99.toFixed(2)}x; moves a round ${moves.join(', ')}; a death: ${death.own} own, ${death.others} others dropped, then ${after} moves; ${Date.now() - t0} ms, ${Math.round(process.memoryUsage().rss / 1048576)} MB`)
      expect(random.max).to.be.above(1.4) // what there is to even out
      expect(even.max).to.be.at.most(1.25)
      expect(m.spread().max).to.be.at.most(1.25)
      expect(moves.at(-1)).to.be.below(moves[0] / 5) // settling, not churning
      expect(death.others).to.equal(0)
      expect(death.made).to.equal(death.own)
    })
  }
})
