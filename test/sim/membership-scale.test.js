// SWIM at 1000 members, simulated (sim/membership-measure.js, as bench/cluster/gossip-sim.js
// reports it): a join reaches everyone, per-member traffic does not grow with N, and 10%
// message loss kills nobody.
import { expect } from 'chai'
import { measure } from '../../sim/membership-measure.js'

describe('membership at 1000 members (simulated)', function () {
  this.timeout(120000)
  let small, large

  before(async () => {
    const only = new Set(['spread', 'loss'])
    small = await measure(100, { seed: 42, only, trafficRounds: 20, lossRounds: 40 })
    large = await measure(1000, { seed: 42, only, trafficRounds: 20, lossRounds: 40 })
  })

  it('a join is known to all 1000 within 10 rounds, and a death found by all', () => {
    expect(large.joinRounds).to.be.within(0, 10)
    expect(large.deathDeadRounds).to.be.within(0, 40)
  })

  it('per-member messages per round are flat in N (1000 vs 100)', () => {
    expect(large.msgsPerMemberRound).to.be.at.most(small.msgsPerMemberRound * 1.1)
    // bytes other than push-pull's full lists (whose interval scales with log N) stay flat too
    const rest = (r) => r.bytesPerMemberRound - r.syncBytesPerMemberRound
    expect(rest(large)).to.be.at.most(rest(small) * 1.5)
  })

  it('10% message loss for 40 rounds: no member declared dead', () => {
    expect(large.lossFalseDeadViews).to.equal(0)
    expect(small.lossFalseDeadViews).to.equal(0)
  })
})
