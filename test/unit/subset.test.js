// The subset a client connects to (client/subset.js), as a pure function: bounded, serving
// every method the client calls, and stable when members come and go.
import { expect } from 'chai'
import { chooseSubset } from '../../client/subset.js'

const eps = (n, from = 0) => Array.from({ length: n }, (_, i) => `tcp://127.0.0.1:${10000 + from + i}`)

describe('subset choice (rendezvous ranking over the methods called)', () => {
  const all = eps(100)
  const anyMethod = () => true

  it('at most `size` members; all of them when there are no more than `size`, or size is 0', () => {
    expect(chooseSubset({ members: all, methods: ['m'], mayServe: anyMethod, key: 'k', size: 8 }).size).to.equal(8)
    expect(chooseSubset({ members: eps(5), methods: ['m'], mayServe: anyMethod, key: 'k', size: 8 }).size).to.equal(5)
    expect(chooseSubset({ members: all, methods: ['m'], mayServe: anyMethod, key: 'k', size: 0 }).size).to.equal(100)
    expect(chooseSubset({ members: all, methods: [], mayServe: anyMethod, key: 'k', size: 8 }).size).to.equal(8)
  })

  it('a member\'s death replaces only it, with the next-ranked member; a new member displaces at most one', () => {
    for (const key of ['a', 'b', 'c', 'd']) {
      const before = chooseSubset({ members: all, methods: ['m'], mayServe: anyMethod, key, size: 8 })
      const dead = [...before][3]
      const after = chooseSubset({ members: all.filter((e) => e !== dead), methods: ['m'], mayServe: anyMethod, key, size: 8 })
      expect([...before].filter((e) => !after.has(e))).to.deep.equal([dead])
      expect([...after].filter((e) => !before.has(e))).to.have.length(1)
      const grown = chooseSubset({ members: [...all, ...eps(1, 500)], methods: ['m'], mayServe: anyMethod, key, size: 8 })
      expect([...before].filter((e) => !grown.has(e)).length).to.be.at.most(1)
    }
  })

  it('three services of 30 peers each: a client calling one method of each gets peers of all three; one of 50 methods spends the subset once', () => {
    const svc = (ep) => Math.floor((Number(ep.split(':')[2]) - 10000) / 30) // 0, 1, 2 (and 3 for the last 10)
    const mayServe = (ep, m) => `s${svc(ep)}` === m.split('.')[0]
    const three = chooseSubset({ members: eps(90), methods: ['s0.get', 's1.get', 's2.get'], mayServe, key: 'k', size: 9 })
    expect([...three].map(svc).sort()).to.deep.equal([0, 0, 0, 1, 1, 1, 2, 2, 2])
    const fifty = Array.from({ length: 50 }, (_, i) => `s1.m${i}`)
    const one = chooseSubset({ members: eps(90), methods: fifty, mayServe, key: 'k', size: 9 })
    expect([...one].map(svc)).to.deep.equal(Array(9).fill(1))
  })

  it('a method only two members serve gets both, beside a method every member serves', () => {
    const rare = new Set([all[17], all[71]])
    const chosen = chooseSubset({ members: all, methods: ['common', 'rare'], mayServe: (ep, m) => m === 'common' || rare.has(ep), key: 'k', size: 8 })
    expect(chosen.has(all[17]) && chosen.has(all[71])).to.equal(true)
    expect(chosen.size).to.equal(8)
  })

  it('members not known yet count as possible servers; those known to serve none of the methods are left out', () => {
    const known = new Set(eps(50)) // the first 50 said they serve only "other"
    const chosen = chooseSubset({ members: all, methods: ['m'], mayServe: (ep, m) => !known.has(ep), key: 'k', size: 8 })
    for (const ep of chosen) expect(known.has(ep)).to.equal(false)
    expect(chosen.size).to.equal(8)
  })
})
