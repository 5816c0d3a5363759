// SWIM at scale, simulated (sim/membership-measure.js: every member runs the real
// peer/membership code on an in-memory network and a virtual clock): a join reaches all 1,000
// members and a death is found by all, per-member traffic does not grow from 100 to 1,000
// members (npm test holds the 60- and 120-member checks: test/unit/membership-overlay.test.js); 1,000 members under 10%
// loss on every link for 100 rounds declare nobody dead; a cluster of 200 cut in halves until
// each side holds the other dead heals within 40 rounds. (At 1,000 members the partition's
// heal takes minutes and gigabytes to simulate: the messages a partition stalls are delivered
// at the heal, all at once. bench/cluster/gossip-sim.js runs it.)
import { expect } from 'chai'
import { measure } from '../../sim/membership-measure.js'

describe('membership at scale (simulated)', function () {
  this.timeout(120000)

  it('a join is known to all 1,000 within 10 rounds and a death found by all; per-member messages per round flat in N (1,000 vs 100)', async () => {
    const small = await measure(100, { seed: 42, only: new Set(['spread', 'loss']), trafficRounds: 20, lossRounds: 40 })
    const large = await measure(1000, { seed: 42, only: new Set(['spread']), trafficRounds: 20 })
    console.log(`      100: ${JSON.stringify(small)}\n      1000: ${JSON.stringify(large)}`)
    expect(large.joinRounds).to.be.within(0, 10)
    expect(large.deathDeadRounds).to.be.within(0, 40)
    expect(large.msgsPerMemberRound).to.be.at.most(small.msgsPerMemberRound * 1.1)
    // bytes other than push-pull's full lists (whose interval scales with log N) stay flat too
    const rest = (r) => r.bytesPerMemberRound - r.syncBytesPerMemberRound
    expect(rest(large)).to.be.at.most(rest(small) * 1.5)
    expect(small.lossFalseDeadViews, '100 members, 10% loss for 40 rounds').to.equal(0)
  })

  it('1,000 members, 10% loss for 100 rounds: no member falsely declared dead', async () => {
    const t0 = Date.now()
    const r = await measure(1000, { seed: 42, only: new Set(['loss']) })
    console.log(`      ${JSON.stringify(r)}, ${((Date.now() - t0) / 1000).toFixed(1)} s, ${Math.round(process.memoryUsage().rss / 1048576)} MB`)
    expect(r.lossFalseDeadMembers).to.equal(0)
    expect(r.lossFalseDeadViews).to.equal(0)
  })

  it('200 members cut in halves, each side declaring the other dead, then healed: all alive everywhere within 40 rounds', async () => {
    const r = await measure(200, { seed: 42, only: new Set(['partition']) })
    console.log(`      ${JSON.stringify(r)}`)
    expect(r.partitionHealRounds).to.be.a('number').and.at.most(40)
  })
})
