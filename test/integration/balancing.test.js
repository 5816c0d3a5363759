// Balancing: the p2c strategy's peak-EWMA maths, rendezvous key affinity, and the default
// strategy against a fast and a slow peer over real sockets.
import { expect } from 'chai'
import { p2c } from '../../client/strategies/p2c.js'
import { PeakEwma } from '../../client/peak-ewma.js'
import { seededRandom } from '../../testing/random.js'
import { pickByKey, score } from '../../client/strategies/rendezvous.js'
import { eventually } from '../helpers/eventually.js'
import { harness } from '../helpers/cluster.js'
import { figure } from '../helpers/figures.js'

// A peer as p2c sees it: its own latency estimate, this client's calls on it, its reported load.
const peer = (endpoint, calls = 0, load = 0) => ({ endpoint, calls: { size: calls }, load, latency: new PeakEwma(1000, 1000) })

describe('peak EWMA latency estimate (one per peer)', () => {
  it('jumps to a slower sample at once, and a lower sample pulls it down by the time since the last', () => {
    const e = new PeakEwma(1000, 5000)
    e.add(10, 0)
    expect(e.read(0)).to.equal(10)
    e.add(100, 10)
    expect(e.read(10)).to.equal(100) // peak
    e.add(10, 1010) // one decay period later
    expect(e.read(1010)).to.be.closeTo(100 * Math.exp(-1) + 10 * (1 - Math.exp(-1)), 1e-9)
  })

  it('decays towards zero as it is read, with no new sample (a peer not picked gets cheaper)', () => {
    const e = new PeakEwma(1000, 5000)
    expect(e.read(0)).to.equal(null)
    e.add(200, 0)
    expect(e.read(1000)).to.be.closeTo(200 * Math.exp(-1), 1e-9)
    expect(e.read(3000)).to.be.closeTo(200 * Math.exp(-3), 1e-9)
    expect(e.value).to.equal(200) // reading does not change it
  })

  it('with no sample for staleMs it is stale, and the next sample replaces it', () => {
    const e = new PeakEwma(10000, 1000)
    expect(e.stale(0)).to.equal(true)
    e.add(200, 0)
    expect(e.stale(1000)).to.equal(false)
    expect(e.stale(1001)).to.equal(true)
    e.add(2, 1500)
    expect(e.read(1500)).to.equal(2) // not 200 x exp(-0.15) + ...: the old estimate said nothing of now
  })
})

describe('p2c strategy (peak EWMA)', () => {
  const table = [
    // [a latency, a outstanding, b latency, b outstanding, expected pick]
    [2, 0, 40, 0, 'a'],
    [2, 30, 40, 0, 'b'], //   2 x 31 = 62 > 40 x 1
    [2, 10, 40, 0, 'a'], //   2 x 11 = 22 < 40
    [10, 0, 10, 3, 'a'],
  ]
  for (const [la, oa, lb, ob, want] of table) {
    it(`a ${la} ms x ${oa} outstanding vs b ${lb} ms x ${ob}: picks ${want}`, () => {
      const s = p2c({ random: () => 0.1, now: () => 0 })
      const a = peer('a', oa)
      const b = peer('b', ob)
      a.latency.add(la, 0)
      b.latency.add(lb, 0)
      expect(s.select([a, b]).endpoint).to.equal(want)
      expect(s.select([b, a]).endpoint).to.equal(want)
    })
  }

  it('counts the load a peer reports when it is higher than this client\'s own outstanding', () => {
    const s = p2c({ random: () => 0.1, now: () => 0 })
    const a = peer('a', 0, 50) // busy with other clients' work
    const b = peer('b', 0, 0)
    a.latency.add(5, 0)
    b.latency.add(20, 0)
    expect(s.select([a, b]).endpoint).to.equal('b')
  })

  it('a peer never measured is tried at once', () => {
    const s = p2c({ random: () => 0.1, now: () => 0 })
    const a = peer('a')
    const fresh = peer('fresh')
    a.latency.add(5, 0)
    for (const order of [[a, fresh], [fresh, a]]) expect(s.select(order).endpoint).to.equal('fresh')
  })

  it('costs within 20% (or 0.2 ms) of each other are a tie broken at random; a real difference is not', () => {
    const picks = (la, lb) => {
      const s = p2c({ random: seededRandom(3), now: () => 0 })
      const a = peer('a'); const b = peer('b')
      a.latency.add(la, 0); b.latency.add(lb, 0)
      let n = 0
      for (let i = 0; i < 1000; i++) if (s.select([a, b]).endpoint === 'a') n++
      return n / 1000
    }
    expect(picks(0.22, 0.2)).to.be.within(0.4, 0.6) //   10% apart: a tie
    expect(picks(12, 10)).to.be.within(0.4, 0.6) //      20% apart: a tie
    expect(picks(0.35, 0.2)).to.be.within(0.4, 0.6) //   0.15 ms apart: a tie
    expect(picks(2.2, 0.2)).to.equal(0) //               2 ms slower: never
    expect(picks(13, 10)).to.equal(0) //                 30% slower: never
  })

  it('a peer that was slow and then not picked is tried again once its estimate is stale', () => {
    let t = 0
    const s = p2c({ random: seededRandom(7), now: () => t }) // ties are broken at random: a constant source would always break them one way
    const slow = peer('slow')
    const fast = peer('fast')
    slow.latency.add(200, 0)
    fast.latency.add(2, 0)
    const picks = []
    for (t = 0; t <= 2000; t += 10) {
      const p = s.select([slow, fast])
      picks.push(p.endpoint)
      p.latency.add(2, t) // the slow spell is over: both answer in 2 ms
    }
    const first = picks.indexOf('slow') * 10
    expect(first).to.be.within(1, 1010) // tried again by the time its estimate is stale (1 s)
    // and from then on it takes about half
    const after = picks.slice(first / 10 + 1)
    const share = after.filter((x) => x === 'slow').length / after.length
    expect(share).to.be.within(0.3, 0.7)
  })

  it('serial requests to two identical idle peers spread over both, even after one slow first answer', () => {
    let t = 0
    const rnd = seededRandom(7)
    const s = p2c({ random: rnd, now: () => t })
    const a = peer('a')
    const b = peer('b')
    a.latency.staleMs = b.latency.staleMs = 500
    const got = { a: 0, b: 0 }
    for (let i = 0; t < 3000; i++) { // 3 s of one request at a time
      const p = s.select([a, b])
      got[p.endpoint]++
      const took = i === 0 ? 5 : 0.2 + 0.2 * rnd() // a cold first answer, then 0.2-0.4 ms
      t += took
      p.latency.add(took, t)
    }
    const share = got.a / (got.a + got.b)
    expect(share).to.be.within(0.25, 0.75)
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
    figure(`fast ${counts[fast.endpoint]}, slow ${counts[slow.endpoint]}: ${ratio.toFixed(1)}x`)
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
