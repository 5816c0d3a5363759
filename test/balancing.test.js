// Balancing: the p2c strategy's peak-EWMA maths, rendezvous key affinity, and the default
// strategy against a fast and a slow peer over real sockets.
import { expect } from 'chai'
import { p2c } from '../client/strategies/p2c.js'
import { pickByKey, score } from '../client/strategies/rendezvous.js'
import { eventually } from './helpers/eventually.js'
import { harness } from './helpers/cluster.js'

const peer = (endpoint, calls = 0, load = 0) => ({ endpoint, calls: { size: calls }, load })

describe('p2c strategy (peak EWMA)', () => {
  it('jumps to a slower sample at once and decays back over time', () => {
    let t = 0
    const s = p2c({ now: () => t, decayMs: 1000 })
    const a = peer('a')
    s.onResult(a, { latencyMs: 10 })
    expect(s.latencyOf(a)).to.equal(10)
    t = 10
    s.onResult(a, { latencyMs: 100 })
    expect(s.latencyOf(a)).to.equal(100) // peak
    t = 1010 // one decay period later
    s.onResult(a, { latencyMs: 10 })
    expect(s.latencyOf(a)).to.be.closeTo(100 * Math.exp(-1) + 10 * (1 - Math.exp(-1)), 1e-9)
  })

  const table = [
    // [a latency, a outstanding, b latency, b outstanding, expected pick]
    [2, 0, 40, 0, 'a'],
    [2, 30, 40, 0, 'b'], //   2 x 31 = 62 > 40 x 1
    [2, 10, 40, 0, 'a'], //   2 x 11 = 22 < 40
    [10, 0, 10, 3, 'a'],
  ]
  for (const [la, oa, lb, ob, want] of table) {
    it(`a ${la} ms x ${oa} outstanding vs b ${lb} ms x ${ob}: picks ${want}`, () => {
      const s = p2c({ random: () => 0.1 })
      const a = peer('a', oa)
      const b = peer('b', ob)
      s.onResult(a, { latencyMs: la })
      s.onResult(b, { latencyMs: lb })
      expect(s.select([a, b]).endpoint).to.equal(want)
      expect(s.select([b, a]).endpoint).to.equal(want)
    })
  }

  it('counts the load a peer reports when it is higher than this client\'s own outstanding', () => {
    const s = p2c({ random: () => 0.1 })
    const a = peer('a', 0, 50) // busy with other clients' work
    const b = peer('b', 0, 0)
    s.onResult(a, { latencyMs: 5 })
    s.onResult(b, { latencyMs: 20 })
    expect(s.select([a, b]).endpoint).to.equal('b')
  })

  it('a peer never measured is tried (it costs the average of the others)', () => {
    const s = p2c({ random: () => 0.1 })
    const a = peer('a')
    const fresh = peer('fresh')
    s.onResult(a, { latencyMs: 5 })
    const picks = new Set()
    for (const order of [[a, fresh], [fresh, a]]) picks.add(s.select(order).endpoint)
    expect(picks.has('fresh')).to.equal(true)
  })
})

describe('rendezvous key affinity', () => {
  const peers = ['tcp://10.0.0.1:5555', 'tcp://10.0.0.2:5555', 'tcp://10.0.0.3:5555', 'tcp://10.0.0.4:5555'].map((e) => peer(e))
  const keys = Array.from({ length: 20000 }, (_, i) => `user-${i}`)

  it('a key always lands on the same peer, whatever the order of the list', () => {
    for (const k of keys.slice(0, 200)) {
      expect(pickByKey(peers, k).endpoint).to.equal(pickByKey([...peers].reverse(), k).endpoint)
    }
  })

  it('keys spread evenly: each of 4 peers gets 25% +- 2%', () => {
    const counts = new Map()
    for (const k of keys) { const e = pickByKey(peers, k).endpoint; counts.set(e, (counts.get(e) ?? 0) + 1) }
    for (const c of counts.values()) expect(c / keys.length).to.be.within(0.23, 0.27)
  })

  it('when a peer goes, only its keys move; when it comes back, exactly those move back', () => {
    const before = new Map(keys.map((k) => [k, pickByKey(peers, k).endpoint]))
    const gone = peers[1].endpoint
    const rest = peers.filter((p) => p.endpoint !== gone)
    for (const k of keys) {
      const now = pickByKey(rest, k).endpoint
      if (before.get(k) === gone) expect(now).to.not.equal(gone)
      else expect(now).to.equal(before.get(k))
    }
    for (const k of keys) expect(pickByKey(peers, k).endpoint).to.equal(before.get(k))
  })

  it('the score separates key and endpoint', () => {
    expect(score('ab', 'c')).to.not.equal(score('a', 'bc'))
  })
})

describe('default strategy over real sockets', function () {
  this.timeout(20000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('sends at least 3x more work to a 2 ms peer than to a 40 ms peer at concurrency 16', async () => {
    const handlers = (ms) => ({ work: (args, ctx) => new Promise((resolve) => setTimeout(resolve, ms, ctx.endpoint)) })
    const fast = await h.peer({ handlers: handlers(2) })
    const slow = await h.peer({ handlers: handlers(40) })
    const c = h.client({ seeds: [fast.endpoint, slow.endpoint] })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(2))
    const counts = { [fast.endpoint]: 0, [slow.endpoint]: 0 }
    const end = Date.now() + 2000
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (Date.now() < end) counts[await c.request('work')]++
    }))
    const ratio = counts[fast.endpoint] / Math.max(1, counts[slow.endpoint])
    console.log(`      fast ${counts[fast.endpoint]}, slow ${counts[slow.endpoint]}: ${ratio.toFixed(1)}x`)
    expect(ratio).to.be.at.least(3)
  })

  it('routes a key to one peer, and to the same one every time', async () => {
    const handlers = { who: (args, ctx) => ctx.endpoint }
    const peers = [await h.peer({ handlers }), await h.peer({ handlers }), await h.peer({ handlers })]
    const c = h.client({ seeds: peers.map((p) => p.endpoint) })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(3))
    for (const key of ['user-1', 'user-2', 'user-3', 'cart-9']) {
      const seen = new Set()
      for (let i = 0; i < 10; i++) seen.add(await c.request('who', null, { key }))
      expect(seen.size, key).to.equal(1)
    }
  })
})
