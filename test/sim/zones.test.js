// Zones in the whole-system simulation: clients in zone a keep their traffic on zone a's peers
// while those can carry it, and spill the excess when they cannot.
//
// Six identical peers, three labelled zone=a and three zone=b, each declaring capacity 4 and
// running at most 4 requests at once, 10 ms each (so 400 req/s a peer, 2,400 for six). Two
// clients in zone a run 48 loops each of one request then 90 ms of thought: about 955 req/s,
// 40% of the six peers' capacity, 80% of zone a's.
import { expect } from 'chai'
import { SystemSim } from '../../sim/system.js'

const CAPACITY = 4
const SERVICE_MS = 10

/** A handler that runs CAPACITY requests at once on the peer's clock, SERVICE_MS each; the rest queue. */
function work (endpoint, clock) {
  let running = 0
  const queue = []
  const next = () => {
    if (running >= CAPACITY || queue.length === 0) return
    running++
    const done = queue.shift()
    clock.setTimeout(() => { running--; done([endpoint]); next() }, SERVICE_MS)
  }
  return () => new Promise((resolve) => { queue.push(resolve); next() })
}

function zoneSim (seed) {
  return new SystemSim({
    seed,
    peers: 6,
    clients: 2,
    inflight: 48,
    think: 90,
    method: 'work',
    peerOptions: (ep, i, clock) => ({ handlers: { work: work(ep, clock) }, labels: { zone: i < 3 ? 'a' : 'b' }, capacity: CAPACITY }),
    clientOptions: () => ({ zone: 'a' }),
  })
}

/** Answers from each peer over the next `ms`, both clients together. */
async function window (s, ms) {
  const before = [0, 1].map((c) => s.totals(c))
  await s.run(ms)
  const out = new Map()
  for (const c of [0, 1]) for (const [ep, n] of s.totals(c)) out.set(ep, (out.get(ep) ?? 0) + n - (before[c].get(ep) ?? 0))
  return out
}

describe('zones (simulated: 2 zones of 3 peers, clients in zone a at 40% of the capacity)', function () {
  this.timeout(120000)

  for (const seed of [1, 2]) {
    it(`stays in its zone while it has the capacity, spills the excess when 2 of 3 local peers die (seed ${seed})`, async () => {
      const s = zoneSim(seed)
      try {
        await s.start()
        await s.run(2000)
        const healthy = await window(s, 5000)
        const total = [...healthy.values()].reduce((a, b) => a + b, 0)
        const local = s.endpoints.slice(0, 3).reduce((n, ep) => n + (healthy.get(ep) ?? 0), 0)
        expect(total / 5, 'req/s offered').to.be.within(850, 1000)
        expect(local / total, `local share (${[...healthy.values()].join(' / ')})`).to.be.at.least(0.95)

        s.kill(s.endpoints[1])
        s.kill(s.endpoints[2])
        await s.run(3000)
        const after = await window(s, 5000)
        const all = [...after.values()].reduce((a, b) => a + b, 0)
        const fair = all / 4 // the offered load over the healthy peers serving the method
        const survivor = after.get(s.endpoints[0]) ?? 0
        expect(survivor / fair, `survivor's share of a fair one (${s.endpoints.map((ep) => after.get(ep) ?? 0).join(' / ')})`).to.be.at.most(1.5)
        expect(survivor / fair, 'the survivor is still used').to.be.at.least(0.8)
        expect(s.counts.failed, JSON.stringify(s.counts.errors)).to.equal(0)
      } finally {
        await s.stop()
      }
    })
  }
})
