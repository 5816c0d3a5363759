import { expect } from 'chai'
import { IdTable } from '../../runtime/id-table.js'

// Requests in flight by id (the client's calls, a peer's running requests): items carry their id and their chain link.
const item = (id) => ({ id, idNext: null })

describe('id table', () => {
  it('finds, replaces nothing, and removes items by id, in and out of order', () => {
    const t = new IdTable()
    const items = Array.from({ length: 3000 }, (_, i) => item(i + 1))
    for (const it of items) t.add(it)
    expect(t.size).to.equal(3000)
    expect(t.capacity).to.be.at.least(3000) // grew from 1024, chains stay short
    for (const it of items) expect(t.get(it.id)).to.equal(it)
    // Remove every third, then check every one is found or not as it should be.
    for (const it of items) if (it.id % 3 === 0) expect(t.delete(it)).to.equal(true)
    for (const it of items) expect(t.get(it.id)).to.equal(it.id % 3 === 0 ? undefined : it)
    expect(t.size).to.equal(2000)
    expect(t.delete(items[2])).to.equal(false) // already gone
    expect(t.values().map((x) => x.id).sort((a, b) => a - b)).to.deep.equal(items.filter((x) => x.id % 3 !== 0).map((x) => x.id))
  })

  it('keeps ids that share a bucket apart, removing the head, the middle and the tail of a chain', () => {
    const t = new IdTable({ capacity: 1024 })
    // 5, 1029, 2053, 3077 all fall in bucket 5 of 1024.
    const chain = [5, 1029, 2053, 3077].map(item)
    for (const it of chain) t.add(it)
    expect(t.get(2053)).to.equal(chain[2])
    expect(t.delete(chain[1])).to.equal(true) // middle
    expect(chain[1].idNext).to.equal(null) // a removed item points at nothing
    expect(t.get(1029)).to.equal(undefined)
    expect(t.get(5)).to.equal(chain[0])
    expect(t.get(3077)).to.equal(chain[3])
    expect(t.delete(chain[3])).to.equal(true) // head (the last added)
    expect(t.delete(chain[0])).to.equal(true) // tail
    expect(t.get(2053)).to.equal(chain[2])
    expect(t.size).to.equal(1)
  })

  it('answers undefined for any id a peer may send that is not in flight', () => {
    const t = new IdTable()
    t.add(item(1))
    for (const id of [0, 2, -1, 1.5, 2 ** 53 - 1, NaN, Infinity, '1', null, undefined]) expect(t.get(id)).to.equal(undefined)
  })

  it('takes ids up to 2^53-1 (where the client wraps to 1)', () => {
    const t = new IdTable()
    const big = item(2 ** 53 - 1)
    const one = item(1)
    t.add(big); t.add(one)
    expect(t.get(2 ** 53 - 1)).to.equal(big)
    expect(t.get(1)).to.equal(one)
    expect(t.delete(big)).to.equal(true)
    expect(t.get(2 ** 53 - 1)).to.equal(undefined)
  })

  it('under a steady flow of requests keeps one bucket array (nothing rebuilt per request)', () => {
    const t = new IdTable()
    const buckets = t.buckets
    const inflight = []
    for (let id = 1; id <= 100000; id++) {
      const it = item(id)
      t.add(it)
      inflight.push(it)
      if (inflight.length > 256) t.delete(inflight.shift())
    }
    expect(t.buckets).to.equal(buckets)
    expect(t.size).to.equal(256)
  })
})
