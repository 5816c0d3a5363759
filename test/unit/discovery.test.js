// Client discovery (client/discovery.js) on a fake clock: when a reply's membership digest
// prompts a member-list fetch, and that peers that disagree do not make a client refetch on
// every reply.
import { expect } from 'chai'
import FakeTimers from '@sinonjs/fake-timers'
import { Discovery } from '../../client/discovery.js'
import { decode } from '../../protocol/index.js'
import { Questions } from '../../transport/questions.js'

function setup (refreshInterval = 0, answer = true) {
  const fake = FakeTimers.createClock(0)
  const clock = { now: () => fake.now, setTimeout: (f, ms) => fake.setTimeout(f, ms), clearTimeout: (t) => fake.clearTimeout(t) }
  const views = new Map() // endpoint -> digest of its list
  const lists = []
  const asked = [] // [endpoint, seq] of each MEMBERS_GET
  const d = new Discovery({
    clock,
    random: () => 0,
    timeout: 1000,
    refreshInterval,
    upPeers: () => [...views.keys()].map((endpoint) => ({ endpoint })),
    onList: (list, from) => lists.push([from, list.version]),
    questions: new Questions({
      clock,
      send: (ep, frames, done) => {
        const { seq } = decode(frames[0])
        asked.push([ep, seq])
        queueMicrotask(() => { done(null); if (answer) d.onMembers(ep, { seq, membersVersion: views.get(ep), members: [] }) })
      },
    }),
  })
  return { fake, d, views, lists, asked }
}

const flush = () => new Promise((resolve) => setImmediate(resolve))

describe('client discovery', () => {
  it('peers that disagree each give their list once, not once per reply', async () => {
    const { fake, d, views, lists } = setup()
    views.set('a', 111).set('b', 222)
    for (let i = 0; i < 200; i++) { // replies alternate between the two views, 10 ms apart
      d.seen(i % 2 ? 'b' : 'a', i % 2 ? 222 : 111)
      await flush()
      fake.tick(10)
    }
    expect(d.counts.fetches).to.equal(2)
    expect(lists).to.deep.equal([['a', 111], ['b', 222]])
  })

  it('a member list is taken only from the peer it was asked of', async () => {
    const { fake, d, views, lists, asked } = setup(0, false)
    views.set('a', 5)
    d.seen('a', 5)
    await flush()
    expect(asked).to.have.length(1)
    const [, seq] = asked[0]
    d.onMembers('b', { seq, membersVersion: 99, members: [{ endpoint: 'tcp://127.0.0.1:9', state: 'alive', incarnation: 1 }] }) // another peer, same seq
    await flush()
    expect(lists).to.deep.equal([])
    d.onMembers('a', { seq, membersVersion: 5, members: [] })
    await flush()
    expect(lists).to.deep.equal([['a', 5]])
    fake.tick(2000)
  })

  it('a peer whose view changed is asked again, and agreeing peers are asked once', async () => {
    const { fake, d, views } = setup()
    views.set('a', 1).set('b', 1).set('c', 1)
    for (const ep of ['a', 'b', 'c']) { d.seen(ep, 1); await flush(); fake.tick(100) }
    expect(d.counts.fetches).to.equal(1)
    views.set('b', 2) // b learned something
    d.seen('b', 2); await flush(); fake.tick(100)
    expect(d.counts.fetches).to.equal(2)
    // a gave its list already; c's digest is not the newest list's and c never gave one: once
    for (let i = 0; i < 100; i++) { for (const ep of ['a', 'b', 'c']) { d.seen(ep, views.get(ep)); await flush(); fake.tick(20) } }
    expect(d.counts.fetches).to.equal(3)
  })

  it('a young client refreshes sooner: after 250 ms, then doubling up to refreshInterval', async () => {
    const { fake, d, views } = setup(5000)
    views.set('a', 1)
    const at = []
    const fetch = d.fetch.bind(d)
    d.fetch = (ep) => { at.push(fake.now); return fetch(ep) }
    d.start()
    for (let t = 0; t < 14000; t += 50) { fake.tick(50); await flush() }
    d.stop()
    expect(at).to.deep.equal([250, 750, 1750, 3750, 7750, 12750]) // pauses 250, 500, 1000, 2000, 4000, then 5000
  })
})
