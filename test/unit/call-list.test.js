import { expect } from 'chai'
import { CallList } from '../../client/peer-table.js'

// The calls in flight on one peer, linked through the calls themselves.
describe('call list', () => {
  it('adds, removes from any position, iterates and counts', () => {
    const l = new CallList()
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => ({ name, listPrev: null, listNext: null }))
    for (const x of [a, b, c, d]) l.add(x)
    expect([...l].map((x) => x.name)).to.have.members(['a', 'b', 'c', 'd'])
    expect(l.delete(b)).to.equal(true) //  middle
    expect(l.delete(d)).to.equal(true) //  head (last added)
    expect(l.delete(a)).to.equal(true) //  tail
    expect(l.delete(a)).to.equal(false) // not in the list any more
    expect([...l].map((x) => x.name)).to.deep.equal(['c'])
    expect(l.size).to.equal(1)
    l.delete(c)
    expect([...l]).to.deep.equal([])
    expect(l.size).to.equal(0)
    const other = new CallList()
    other.add(a)
    expect(l.delete(a)).to.equal(false) // in another peer's list: untouched
    expect(other.size).to.equal(1)
  })
})
