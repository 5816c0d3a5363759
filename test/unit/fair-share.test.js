// Sharing a busy peer fairly among flows (issue 60, item 1): the queue of work waiting for a
// thread takes the flows with work waiting in turn (peer/fair-queue.js), and a full peer still
// takes a flow below its share (peer/admission.js), never past twice maxInflight.
import { expect } from 'chai'
import { FairQueue } from '../../peer/fair-queue.js'
import { Flow, Flows } from '../../peer/flows.js'
import { Admission } from '../../peer/admission.js'
import { Status } from '../../protocol/constants.js'

const task = (flow, n) => ({ flow, n })

describe('fair queue (peer/fair-queue.js)', () => {
  const order = (q) => q.drain().map((t) => `${t.flow.key}${t.n}`)

  it('the flows with work waiting take turns: a flow with 2 waiting no longer waits behind another\'s 30', () => {
    const a = new Flow('a')
    const b = new Flow('b')
    const q = new FairQueue()
    for (let i = 1; i <= 30; i++) q.push(task(a, i))
    q.push(task(b, 1))
    q.push(task(b, 2))
    expect(q.length).to.equal(32)
    const got = order(q)
    expect(got.slice(0, 5)).to.deep.equal(['a1', 'b1', 'a2', 'b2', 'a3'])
    expect(got.indexOf('b2')).to.equal(3) // not 31, as first come first served had it
    expect(got).to.have.length(32)
    expect(q.length).to.equal(0)
  })

  it('a flow that had nothing waiting goes next, ahead of the round of busy flows (as fq_codel\'s new flows): a client calling once at a time waits for no round', () => {
    const greedy = new Flow('g')
    const other = new Flow('o')
    const modest = new Flow('m')
    const q = new FairQueue()
    for (let i = 1; i <= 10; i++) { q.push(task(greedy, i)); q.push(task(other, i)) }
    expect([q.shift(), q.shift(), q.shift()].map((t) => `${t.flow.key}${t.n}`)).to.deep.equal(['g1', 'o1', 'g2'])
    q.push(task(modest, 1))
    expect(q.shift()).to.include({ flow: modest, n: 1 }) // next, not after o2
    q.push(task(modest, 2))
    q.push(task(modest, 3)) // a newcomer with more waiting joins the round after its first
    expect([q.shift(), q.shift(), q.shift(), q.shift()].map((t) => `${t.flow.key}${t.n}`)).to.deep.equal(['m2', 'o2', 'g3', 'm3'])
  })

  // Seen in the fair scenario once the queue was bounded by time: a greedy client held 1 running
  // and 2 queued, so its queue emptied between refills and each refill came back as a
  // newcomer, ahead of a modest client's call that came just after (the modest p50 99-106 ms
  // against 84 with a queue of 16).
  it('a flow with work running is no newcomer when its queue empties: a modest flow still goes ahead of its next task', () => {
    const greedy = new Flow('g')
    const modest = new Flow('m')
    const q = new FairQueue()
    greedy.held = 2 // one running, and this one
    q.push(task(greedy, 1))
    modest.held = 1
    q.push(task(modest, 1))
    expect(q.drain().map((t) => `${t.flow.key}${t.n}`)).to.deep.equal(['m1', 'g1'])
  })

  const table = [
    { name: 'a lone flow is served first come, first served (work-conserving)', pushes: ['a1', 'a2', 'a3'], expect: ['a1', 'a2', 'a3'] },
    { name: 'three flows, one task each in turn', pushes: ['a1', 'a2', 'b1', 'c1', 'c2', 'a3'], expect: ['a1', 'b1', 'c1', 'a2', 'c2', 'a3'] },
    { name: 'a flow emptied and back is a newcomer again, first come first served among newcomers', pushes: ['a1', 'b1', 'shift', 'shift', 'a2', 'b2', 'c1'], expect: ['a2', 'b2', 'c1'], shifted: ['a1', 'b1'] },
  ]
  for (const row of table) {
    it(row.name, () => {
      const flows = {}
      const q = new FairQueue()
      const shifted = []
      for (const p of row.pushes) {
        if (p === 'shift') { const t = q.shift(); shifted.push(`${t.flow.key}${t.n}`); continue }
        const f = (flows[p[0]] ??= new Flow(p[0]))
        q.push(task(f, Number(p.slice(1))))
      }
      expect(shifted).to.deep.equal(row.shifted ?? [])
      expect(order(q)).to.deep.equal(row.expect)
    })
  }

  it('unshiftAll puts tasks back first in their flows, the first of them next in turn', () => {
    const a = new Flow('a')
    const b = new Flow('b')
    const q = new FairQueue()
    q.push(task(a, 2))
    q.push(task(b, 1))
    q.unshiftAll([task(b, 0), task(a, 1)])
    expect(order(q)).to.deep.equal(['b0', 'a1', 'b1', 'a2'])
    expect(q.shift()).to.equal(undefined)
  })
})

describe('admission by share (peer/admission.js)', () => {
  const fn = () => {}
  const admission = (maxInflight) => new Admission({ limits: { maxInflight, maxInflightBytes: 1e9, maxStreams: 100, maxStreamsPerConnection: 100 }, pressedMessage: () => '' })

  it('a full peer takes a flow below its share, refuses one above it, and never goes past twice maxInflight', () => {
    const ad = admission(16)
    const greedy = new Flow('greedy')
    for (let i = 0; i < 16; i++) expect(ad.take(fn, 0, null, greedy)).to.equal(fn) // work-conserving: a lone flow takes every place
    expect(ad.take(fn, 0, null, greedy)).to.include({ status: Status.BUSY }) // full, and above its share
    const modest = new Flow('modest')
    expect(ad.take(fn, 0, null, modest)).to.equal(fn) // below its share (16 / 2 = 8): taken past the limit
    expect(ad.inflight).to.equal(17)
    expect(ad.byShare).to.equal(1)
    for (let i = 1; i < 8; i++) expect(ad.take(fn, 0, null, modest)).to.equal(fn)
    expect(ad.take(fn, 0, null, modest)).to.include({ status: Status.BUSY }) // at its share
    // Many flows below their share: never past twice maxInflight.
    const others = Array.from({ length: 40 }, (_, i) => new Flow(`f${i}`))
    let taken = 0
    for (const f of others) if (ad.take(fn, 0, null, f) === fn) taken++
    expect(ad.inflight).to.be.at.most(32)
    expect(taken).to.be.below(40)
  })

  // Seen in the fair scenario once the queue was bounded by time: 2 places (30 ms requests
  // measured at 60 beside other processes) among 3 flows made a share of 0, and a modest
  // client's every call was refused busy (its p99 4.9x alone's, where 3x is the bound).
  it('a flow holding nothing is taken while the peer is under twice its places, however many flows share so few', () => {
    const ad = new Admission({ limits: { maxInflight: 1024, maxInflightBytes: 1e9, maxStreams: 100, maxStreamsPerConnection: 100 }, places: () => 2, pressedMessage: () => '' })
    const greedy = new Flow('greedy')
    const [m1, m2] = [new Flow('m1'), new Flow('m2')]
    for (let i = 0; i < 2; i++) expect(ad.take(fn, 0, null, greedy)).to.equal(fn)
    expect(ad.take(fn, 0, null, greedy)).to.include({ status: Status.BUSY })
    expect(ad.take(fn, 0, null, m1)).to.equal(fn) // 2 places among 3 flows: a share of one, not 0
    expect(ad.take(fn, 0, null, m2)).to.equal(fn)
    expect(ad.take(fn, 0, null, m1)).to.include({ status: Status.BUSY }) // twice its places
    expect(ad.inflight).to.equal(4)
  })

  it('places given back free the flow: a lone flow again takes them all', () => {
    const ad = admission(4)
    const a = new Flow('a')
    const b = new Flow('b')
    for (let i = 0; i < 4; i++) ad.take(fn, 0, null, a)
    ad.take(fn, 0, null, b)
    ad.release(0, false, b)
    expect(ad.flows).to.equal(1)
    expect(b.held).to.equal(0)
    for (let i = 0; i < 4; i++) ad.release(0, false, a)
    expect(ad.flows).to.equal(0)
    for (let i = 0; i < 4; i++) expect(ad.take(fn, 0, null, b)).to.equal(fn)
  })
})

describe('flows (peer/flows.js)', () => {
  it('a connection is a flow by default; with flowHeader, the header\'s value names one across connections, and a request without it stays its connection\'s', () => {
    const byConn = new Flows()
    const c1 = { key: 1, flow: null }
    const c2 = { key: 2, flow: null }
    expect(byConn.of(c1, { 'x-tenant': 'acme' })).to.equal(byConn.of(c1, null))
    expect(byConn.of(c1, null)).to.not.equal(byConn.of(c2, null))
    const byTenant = new Flows({ header: 'x-tenant' })
    expect(byTenant.of(c1, { 'x-tenant': 'acme' })).to.equal(byTenant.of(c2, { 'x-tenant': 'acme' }))
    expect(byTenant.of(c1, { 'x-tenant': 'acme' })).to.not.equal(byTenant.of(c1, { 'x-tenant': 'other' }))
    expect(byTenant.of(c1, {})).to.equal(byTenant.of(c1, null))
  })

  it('header flows are bounded: idle ones are forgotten, and past the bound busy ones share one', () => {
    const flows = new Flows({ header: 'x-tenant' })
    for (let i = 0; i < 5000; i++) flows.of({ key: 0 }, { 'x-tenant': `t${i}` }).held = 1
    expect(flows.byKey.size).to.equal(4096)
    const over = flows.of({ key: 0 }, { 'x-tenant': 'one-more' })
    expect(flows.of({ key: 0 }, { 'x-tenant': 'and-another' })).to.equal(over)
    for (const f of flows.byKey.values()) f.held = 0
    flows.of({ key: 0 }, { 'x-tenant': 'fresh' })
    expect(flows.byKey.size).to.equal(1) // the idle ones were forgotten
  })
})
