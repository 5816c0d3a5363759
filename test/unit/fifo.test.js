import { expect } from 'chai'
import { Fifo } from '../../peer/fifo.js'

// The worker pool's queue: first in, first out, growing, and clearing what it gives out.
describe('fifo', () => {
  it('gives items back in order across growth and wrap-around', () => {
    const q = new Fifo(4)
    const out = []
    let next = 0
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < (round % 7) + 1; i++) q.push(next++)
      for (let i = 0; i < (round % 5) + 1 && q.length > 0; i++) out.push(q.shift())
    }
    out.push(...q.drain())
    expect(out).to.deep.equal(Array.from({ length: next }, (_, i) => i))
    expect(q.length).to.equal(0)
    expect(q.shift()).to.equal(undefined)
  })

  it('puts items back in front in their order', () => {
    const q = new Fifo(2)
    q.push('c'); q.push('d')
    q.unshiftAll(['a', 'b'])
    expect(q.drain()).to.deep.equal(['a', 'b', 'c', 'd'])
  })

  it('holds nothing it has given out (no finished request kept alive)', () => {
    const q = new Fifo(4)
    for (let i = 0; i < 3; i++) q.push({ i })
    q.shift(); q.shift()
    expect(q.slots.filter((s) => s !== undefined)).to.have.length(1)
    const before = q.slots
    for (let i = 0; i < 10; i++) q.push({ i })
    expect(before.every((s) => s === undefined)).to.equal(true) // the storage it outgrew is cleared
  })
})
