// Even load over subsets (client/rebalance.js, client/roster.js moves, client/subset.js
// ranking, peer/client-count.js): the decision, the ranking a move bends, one round of a
// client against peers that say their counts, and what a peer counts.
import { expect } from 'chai'
import { crowded, Rebalancer } from '../../client/rebalance.js'
import { chooseSubset, rank } from '../../client/subset.js'
import { Roster } from '../../client/roster.js'
import { ClientCount } from '../../peer/client-count.js'
import { MemberState } from '../../protocol/constants.js'

const eps = (n) => Array.from({ length: n }, (_, i) => `tcp://10.0.0.${i + 1}:5555`)

function roster (members, subset) {
  const r = new Roster({ maxPeers: 100, subset, key: 'k1', table: { entries: new Map(), get: () => undefined }, services: null })
  for (const ep of members) r.record({ endpoint: ep, incarnation: 1, state: MemberState.ALIVE }, null, 0)
  return r
}

describe('even load over subsets', () => {
  it('crowded(): the busiest peer when it holds 1.15x the mean and 2 more, else none', () => {
    expect(crowded([['a', 10], ['b', 10], ['c', 10]])).to.equal(null)
    expect(crowded([['a', 14], ['b', 10], ['c', 10]])).to.equal('a') // mean 11.3: 1.24x, 2.7 more
    expect(crowded([['a', 12], ['b', 10], ['c', 10]])).to.equal(null) // 1.12x
    expect(crowded([['a', 4], ['b', 2], ['c', 2]])).to.equal(null) // 1.5x, but 1.3 more: noise at small counts
    expect(crowded([['a', 50]])).to.equal(null) // nothing to compare with
  })

  it('a move ranks the peer moved to first and the one moved from last; the rest keep the hash\'s order', () => {
    const members = eps(10)
    const base = rank(members, 'k1')
    const prefer = new Set([base[9]])
    const avoid = new Set([base[0]])
    expect(rank(members, 'k1', prefer, avoid)).to.deep.equal([base[9], ...base.slice(1, 9), base[0]])
    const subset = chooseSubset({ members, methods: [], mayServe: () => true, key: 'k1', size: 3, prefer, avoid })
    expect([...subset].sort()).to.deep.equal([base[9], base[1], base[2]].sort())
  })

  it('roster.move() and candidate(): the best-ranked member not held and not moved away from', () => {
    const members = eps(10)
    const r = roster(members, 3)
    const held = r.choose()
    const base = rank(members, 'k1')
    expect([...held]).to.have.members(base.slice(0, 3))
    const to = r.candidate(held)
    expect(to).to.equal(base[3])
    r.move(base[0], to)
    expect([...r.choose()]).to.have.members([base[3], base[1], base[2]])
    expect(r.candidate(r.choose())).to.equal(base[4]) // base[0] was moved away from: not a candidate
    // Moves remembered at most the subset's size each way, the oldest forgotten.
    for (let i = 4; i < 9; i++) r.move(base[i - 3], base[i])
    expect(r.prefer.size).to.be.at.most(3)
    expect(r.avoid.size).to.be.at.most(3)
  })

  it('a round: asks the peers held for their counts, moves one connection off a crowded one, and nothing when none stands out', async () => {
    const members = eps(6)
    const r = roster(members, 3)
    const held = [...r.choose()]
    let cc = Object.fromEntries(held.map((ep, i) => [ep, i === 0 ? 20 : 10]))
    const asked = []
    const questions = { ask: (ep, frameOf, timeout, done) => { asked.push(ep); done({ meta: { cc: cc[ep] } }) } }
    let resubsets = 0
    const counts = { moves: 0 }
    const rb = new Rebalancer({ interval: 0, clock: { setTimeout () {}, clearTimeout () {} }, random: Math.random, questions, held: () => held.map((endpoint) => ({ endpoint, retiring: false })), roster: r, resubset: () => resubsets++, counts })
    await rb.round()
    expect(asked).to.have.members(held)
    expect(counts.moves).to.equal(1)
    expect(resubsets).to.equal(1)
    expect(r.choose().has(held[0])).to.equal(false)
    cc = Object.fromEntries(held.map((ep) => [ep, 10]))
    await rb.round()
    expect(counts.moves).to.equal(1)
    // A peer that says no count (an older peer) is left out of the comparison.
    const older = new Rebalancer({ interval: 0, clock: { setTimeout () {}, clearTimeout () {} }, random: Math.random, questions: { ask: (ep, f, t, done) => done({ meta: {} }) }, held: () => held.map((endpoint) => ({ endpoint, retiring: false })), roster: r, resubset: () => resubsets++, counts })
    await older.round()
    expect(counts.moves).to.equal(1)
  })

  it('a peer counts the connections heard from in the last 3 s', () => {
    const c = new ClientCount()
    c.heard(1, 0)
    c.heard(2, 1000)
    c.heard(1, 2000)
    expect(c.count(2500)).to.equal(2)
    expect(c.count(4100)).to.equal(1) // 2 was last heard at 1000
    expect(c.count(5100)).to.equal(0)
    c.heard(3, 6000)
    c.clear()
    expect(c.count(6000)).to.equal(0)
  })
})

describe('subsets of a client with a zone', () => {
  it('take the zone\'s members first, all of them when they fit, leaving a quarter to the others', () => {
    const members = eps(40)
    const local = new Set(members.slice(0, 20))
    const s = chooseSubset({ members, methods: [], mayServe: () => true, key: 'k', size: 32, local })
    expect([...local].every((ep) => s.has(ep))).to.equal(true)
    expect(s.size).to.equal(32)
    const few = chooseSubset({ members, methods: [], mayServe: () => true, key: 'k', size: 8, local })
    expect([...few].filter((ep) => local.has(ep))).to.have.length(6) // 8 - 8/4
  })

  it('a move from a local peer goes to a local one', () => {
    const members = eps(12)
    const local = (ep) => members.indexOf(ep) < 6
    const r = new Roster({ maxPeers: 100, subset: 4, key: 'k1', table: { entries: new Map(), get: () => undefined }, services: null, local })
    for (const ep of members) r.record({ endpoint: ep, incarnation: 1, state: MemberState.ALIVE }, null, 0)
    const held = r.choose()
    const from = [...held].find(local)
    expect(local(r.candidate(held, from))).to.equal(true)
  })
})
