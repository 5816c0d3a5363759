// The one outbox both directions coalesce through (transport/outbox.js): its speed rules
// (the lone path, the held turn, the early flush) and its frame limits.
import { expect } from 'chai'
import { Outbox, EARLY_FLUSH } from '../../transport/outbox.js'

const turn = () => new Promise((resolve) => setImmediate(resolve))

function outbox (o = {}) {
  const frames = [] // [dest, entries, tags]
  const box = new Outbox({ send: (dest, entries, tags) => frames.push([dest, entries, tags]), maxBatch: 4, maxBytes: 100, overhead: 10, ...o })
  return { box, frames }
}

const bytes = (n, fill = 1) => Buffer.alloc(n, fill)

describe('outbox (transport/outbox.js)', () => {
  it('the lone path: open only with nothing waiting, no held turn and nothing else out', async () => {
    const { box } = outbox()
    expect(box.lone('a', 0)).to.equal(true)
    expect(box.lone('a', 1)).to.equal(false) // something in flight (client) or in the same frame (peer)
    box.add('a', 'A', bytes(5), 't1')
    expect(box.lone('a', 0)).to.equal(false)
    expect(box.lone('b', 0)).to.equal(true) // per destination
    expect(box.waiting('a')).to.equal(true)
    await turn()
    expect(box.lone('a', 0)).to.equal(true)
    expect(box.waiting('a')).to.equal(false)
  })

  it('entries of one turn leave together at its end, in order, with their tags; one flush for every destination', async () => {
    const { box, frames } = outbox()
    box.add('a', 'A', bytes(5, 1), 1)
    box.add('b', 'B', bytes(5, 2), 2)
    box.add('a', 'A', bytes(5, 3), 3)
    expect(frames).to.have.length(0)
    await turn()
    expect(frames.map(([d, e, t]) => [d, e.map((x) => x[0]), t])).to.deep.equal([['A', [1, 3], [1, 3]], ['B', [2], [2]]])
    await turn()
    expect(frames).to.have.length(2) // nothing sent twice
  })

  it('a held turn shuts the lone path for that destination until the turn ends, then opens it again', async () => {
    const { box, frames } = outbox()
    box.hold('a', 'A')
    expect(box.lone('a', 0)).to.equal(false)
    expect(box.lone('b', 0)).to.equal(true)
    await turn()
    expect(frames).to.have.length(0) // a hold with nothing added sends nothing
    expect(box.lone('a', 0)).to.equal(true)
  })

  it('frames keep to maxBatch entries and maxBytes (overhead counted); an entry over maxBytes still goes, alone', async () => {
    const { box, frames } = outbox()
    for (let i = 0; i < 6; i++) box.add('a', 'A', bytes(5), i) // 6 small: 4 + 2 (maxBatch)
    await turn()
    expect(frames.map(([, e]) => e.length)).to.deep.equal([4, 2])
    frames.length = 0
    box.add('a', 'A', bytes(40), 'x') // 10 + 40 + 40 = 90 fits; + 40 more does not
    box.add('a', 'A', bytes(40), 'y')
    box.add('a', 'A', bytes(40), 'z')
    box.add('a', 'A', bytes(200), 'big')
    box.add('a', 'A', bytes(5), 'after')
    await turn()
    expect(frames.map(([, , t]) => t)).to.deep.equal([['x', 'y'], ['z'], ['big'], ['after']])
  })

  it('keep() leaves out entries whose owner moved on before their turn', async () => {
    const gone = new Set(['t2'])
    const { box, frames } = outbox({ keep: (tag, dest) => dest === 'A' && !gone.has(tag) })
    box.add('a', 'A', bytes(5), 't1')
    box.add('a', 'A', bytes(5), 't2')
    box.add('a', 'A', bytes(5), 't3')
    await turn()
    expect(frames.map(([, , t]) => t)).to.deep.equal([['t1', 't3']])
  })

  it('the early flush: once EARLY_FLUSH wait, or half of what is in flight, they leave before the turn ends', async () => {
    const { box, frames } = outbox({ early: true, maxBatch: 1000, maxBytes: 1e6 })
    for (let i = 0; i < EARLY_FLUSH - 1; i++) box.add('a', 'A', bytes(5), i, i + 1)
    expect(frames).to.have.length(0)
    box.add('a', 'A', bytes(5), 'last', EARLY_FLUSH)
    expect(frames).to.have.length(1) // still in the same turn
    expect(frames[0][1]).to.have.length(EARLY_FLUSH)
    expect(box.lone('a', 0)).to.equal(false) // the turn is still coalescing
    // With 200 in flight, 100 wait before they leave.
    for (let i = 0; i < 99; i++) box.add('b', 'B', bytes(5), i, 200)
    expect(frames).to.have.length(1)
    box.add('b', 'B', bytes(5), 99, 200)
    expect(frames).to.have.length(2)
    expect(frames[1][1]).to.have.length(100)
    await turn()
    expect(frames).to.have.length(2)
  })

  it('without early, nothing leaves before the turn ends', async () => {
    const { box, frames } = outbox({ maxBatch: 1000, maxBytes: 1e6 })
    for (let i = 0; i < 500; i++) box.add('a', 'A', bytes(5), i, 1)
    expect(frames).to.have.length(0)
    box.flush() // the owner stops: everything now
    expect(frames).to.have.length(1)
    expect(frames[0][1]).to.have.length(500)
    await turn()
    expect(frames).to.have.length(1)
  })
})
