// The memory limit's thresholds and actions (peer/memory-limit.js), on a made-up RSS and clock.
import { expect } from 'chai'
import { watchMemoryLimit, defaultMemoryLimit, COLLECT_AT, SHED_AT } from '../../peer/memory-limit.js'
import { resolvePeerOptions } from '../../peer/options.js'

const MB = 1024 * 1024

function rig (limit = 500 * MB) {
  const r = { rss: 100 * MB, t: 0, actions: [], collected: 0, shed: 0 }
  r.watch = watchMemoryLimit({
    limit,
    rss: () => r.rss,
    now: () => r.t,
    collect: () => { r.collected++ },
    shed: () => { r.shed++ },
    onAction: (what) => r.actions.push(what),
    setInterval: () => ({}),
    clearInterval: () => {},
  })
  r.at = (ms, rss) => { r.t = ms; r.rss = rss; r.watch.check() }
  return r
}

describe('the memory limit (peer/memory-limit.js)', () => {
  it('does nothing below 60% of the limit', () => {
    const r = rig()
    for (let t = 0; t < 5000; t += 20) r.at(t, 500 * MB * COLLECT_AT - 1)
    expect(r.actions).to.deep.equal([])
  })

  it('past 60% collects, at most every 200 ms', () => {
    const r = rig()
    for (let t = 0; t < 1000; t += 20) r.at(t, 320 * MB)
    expect(r.actions).to.deep.equal(['collect', 'collect', 'collect', 'collect', 'collect'])
  })

  it('past 80% closes every connection once a collection 50 ms before did not bring it down, then waits 5 s before doing so again', () => {
    const r = rig()
    r.at(0, 450 * MB) //  past 80%: a collection first
    r.at(20, 450 * MB) // too soon after it
    expect(r.actions).to.deep.equal(['collect'])
    r.at(60, 450 * MB)
    expect(r.actions).to.deep.equal(['collect', 'shed'])
    for (let t = 80; t < 5060; t += 20) r.at(t, 450 * MB) // collections, no shedding for 5 s
    expect(r.shed).to.equal(1)
    expect(r.collected).to.equal(26) // at 0, then every 200 ms
    r.at(5060, 450 * MB)
    expect(r.shed).to.equal(2)
  })

  it('a collection that brings it below 80% is enough', () => {
    const r = rig()
    r.at(0, 450 * MB)
    r.at(60, 500 * MB * SHED_AT - 1)
    expect(r.actions).to.deep.equal(['collect'])
  })

  it('defaults to the cgroup\'s limit when it is below the machine\'s memory, else none', () => {
    expect(defaultMemoryLimit(512 * MB, 24000 * MB)).to.equal(512 * MB)
    expect(defaultMemoryLimit(2 ** 64, 24000 * MB)).to.equal(0) // no limit set: libuv says "all of it"
    expect(defaultMemoryLimit(0, 24000 * MB)).to.equal(0)
    expect(resolvePeerOptions({ memoryLimit: 0 }).memoryLimit).to.equal(0)
    expect(resolvePeerOptions({ memoryLimit: 256 * MB }).memoryLimit).to.equal(256 * MB)
    expect(resolvePeerOptions({}).memoryLimit).to.equal(defaultMemoryLimit())
    expect(() => resolvePeerOptions({ memoryLimit: 1000 })).to.throw(/memoryLimit must be 'cgroup'.*64 MiB/)
    expect(() => resolvePeerOptions({ memoryLimit: '512m' })).to.throw(/memoryLimit/)
  })
})

describe('the memory limit, counting what is received', () => {
  it('checks once every 8 MiB received, between its timer\'s checks (a busy main thread holds timers back)', () => {
    let reads = 0
    const w = watchMemoryLimit({ limit: 500 * MB, rss: () => { reads++; return 450 * MB }, now: () => 0, collect: () => {}, shed: () => {}, setInterval: () => ({}), clearInterval: () => {} })
    for (let i = 0; i < 7; i++) w.received(MB)
    expect(reads).to.equal(0)
    expect(w.pressed).to.equal(false)
    w.received(MB)
    expect(reads).to.be.above(0)
    expect(w.pressed).to.equal(true) // 450 of 500 MB: new work is refused busy
  })
})

describe('the memory limit, shrinking the budget for new work', () => {
  it('leaves all of maxInflightBytes below 60%, a share falling in step to none at 80%, and presses past it', () => {
    const r = rig()
    r.at(0, 200 * MB)
    expect(r.watch.room).to.equal(1)
    r.at(20, 350 * MB) // halfway from 300 to 400 MB
    expect(r.watch.room).to.be.closeTo(0.5, 1e-9)
    expect(r.watch.pressed).to.equal(false)
    r.at(40, 400 * MB)
    expect(r.watch.room).to.equal(0)
    expect(r.watch.pressed).to.equal(true)
    r.at(60, 250 * MB)
    expect(r.watch.room).to.equal(1)
  })
})
