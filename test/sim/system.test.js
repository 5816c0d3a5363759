// The whole system under faults, simulated: 5 real Peers and 2 real Clients (8 requests in
// flight each) on the in-memory network and a virtual clock (sim/system.js),
// deterministic from a seed. Each scenario asserts what a user relies on: no idempotent
// request fails, every live peer is back in every client's rotation (half its fair share
// or more) within 5 s of the fault ending, healthy members are never declared dead by
// healthy members, and clients' member-list fetches stay bounded whatever the disagreement.
import { expect } from 'chai'
import { SystemSim } from '../../sim/system.js'
import { scenarios, P } from '../../sim/system-scenarios.js'
import { insideOf } from '../../peer/peer.js'

const MAX_FETCHES_PER_S = 5 // per client, averaged over the scenario

describe('whole system under faults (simulated: 5 peers, 2 clients, virtual clock)', function () {
  this.timeout(60000)

  for (const sc of scenarios) {
    for (const seed of sc.seeds ?? [1, 2]) {
      it(`${sc.name} (seed ${seed})`, async () => {
        const s = new SystemSim({ seed })
        try {
          await s.start()
          expect(s.converged()).to.equal(true)
          const t0 = s.clock.now()
          const f0 = s.fetches()
          await sc.fault(s)
          const end = s.clock.now()
          const back = await s.untilFullRotation(15000)
          expect(back, 'ms from the fault\'s end until every live peer had half its share in every client').to.be.within(0, 5000)
          expect(s.counts.failed, JSON.stringify(s.counts.errors)).to.equal(0)
          expect(s.counts.ok).to.be.above(1000)
          const healthy = s.deaths.filter(([t, , ep]) => !s.faulty.has(ep) && (!sc.deathsDuringFault || t >= end))
          expect(healthy, 'healthy members declared dead by healthy members').to.deep.equal([])
          if (sc.noDeathAtAll) expect(insideOf(s.peers.get(P(2))).membership.counts.died + s.deaths.length).to.equal(0)
          const perSecond = (s.fetches() - f0) / ((s.clock.now() - t0) / 1000) / s.clients.length
          expect(perSecond).to.be.at.most(MAX_FETCHES_PER_S)
          // and the members agree again
          let agreed = false
          for (let i = 0; i < 40 && !agreed; i++) { agreed = s.converged(); if (!agreed) await s.run(250) }
          expect(agreed, 'every peer sees every running peer alive').to.equal(true)
        } finally {
          await s.stop()
        }
      })
    }
  }

  it('serial requests from one client to idle identical peers spread over all of them', async () => {
    const s = new SystemSim({ seed: 3, clients: 1, inflight: 1, think: 20 })
    try {
      await s.start()
      await s.run(10000)
      const now = s.clock.now()
      for (const ep of s.endpoints) expect(s.share(0, ep, now - 8000, now), ep).to.be.within(0.1, 0.3)
    } finally {
      await s.stop()
    }
  })
})
