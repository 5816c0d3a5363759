// A busy peer means wait, not fail (client/capacity.js): two `zeromesh peer` processes with one
// thread each and a small queue (--max-queue 16, so a raised default proves nothing), and a
// client started a moment before its burst. Each request is 10 ms of CPU.
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { startPeer, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { Client } from '../../index.js'
import { figure } from '../helpers/figures.js'

const WORK = fileURLToPath(new URL('../fixtures/work.js', import.meta.url))
const PEER = ['--handlers', WORK, '--threads', '1', '--max-queue', '16']

describe('a cold burst on busy peers (processes)', function () {
  this.timeout(60000)
  let a, b
  const clients = []

  before(async () => {
    a = await startPeer(PEER)
    b = await startPeer([...PEER, '--seeds', a.endpoint])
  })
  afterEach(async () => { await Promise.all(clients.splice(0).map((c) => c.close())) })
  after(killAll)

  function client (options) {
    const c = new Client({ seeds: [a.endpoint], ...options })
    clients.push(c)
    return c
  }

  it('300 requests of 10 ms fired by a client started a moment ago, 10 s deadline: 300 of 300 succeed, spread over both peers', async () => {
    const c = client()
    const t0 = Date.now()
    const out = await Promise.allSettled(Array.from({ length: 300 }, () => c.request('busyAt', { ms: 10 }, { timeout: 10000 })))
    const failed = out.filter((r) => r.status === 'rejected')
    expect(failed.map((r) => r.reason.code)).to.deep.equal([])
    const served = {}
    for (const r of out) served[r.value] = (served[r.value] ?? 0) + 1
    figure(`served: ${JSON.stringify(served)}`)
    expect(Object.keys(served).sort()).to.deep.equal([a.endpoint, b.endpoint].sort()) // the peer it learned took its share
    expect(Math.min(...Object.values(served))).to.be.above(60)
    const s = c.stats()
    figure(`300 of 300 in ${Date.now() - t0} ms; waited ${s.waited}, retries ${s.retries}`)
    expect(s.waited).to.be.above(0) // the peers said busy: the calls waited for places
    expect(s.retries).to.be.below(30) // a busy refusal is not a retry (hundreds were refused); an attempt timeout may be
  })

  it('a burst ten times what fits in its deadline: what fits succeeds, the rest fails by its deadline (BUSY, or TIMEOUT if taken), nothing later', async () => {
    const c = client()
    await c.waitFor('busyFor')
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(2)) // both peers known
    // Two peers of one thread, 10 ms a request: about 200 a second; 1 s deadlines, 2000 calls.
    const late = [] // each call's settling past its own deadline, from when it was made
    const out = await Promise.allSettled(Array.from({ length: 2000 }, () => {
      const made = performance.now()
      const p = c.request('busyFor', { ms: 10 }, { timeout: 1000 })
      const settled = () => late.push(performance.now() - made - 1000)
      p.then(settled, settled)
      return p
    }))
    const ok = out.filter((r) => r.status === 'fulfilled').length
    const codes = {}
    for (const r of out) if (r.status === 'rejected') codes[r.reason.code] = (codes[r.reason.code] ?? 0) + 1
    figure(`ok ${ok}, failed ${JSON.stringify(codes)}, the latest ${Math.max(...late).toFixed(1)} ms past its deadline`)
    expect(ok).to.be.within(60, 210) // about what fits (a noisy 2-core machine runs the test too)
    expect(Object.keys(codes).every((k) => k === 'ERR_ZEROMESH_BUSY' || k === 'ERR_ZEROMESH_TIMEOUT')).to.equal(true)
    expect(codes.ERR_ZEROMESH_BUSY).to.be.above(1500)
    expect(Math.max(...late)).to.be.below(100) // by its deadline (timers and a busy event loop); 5-17 ms here
    expect(c.stats().waiting).to.equal(0)
  })

  it('the client bounds what waits: beyond maxPending calls (or maxPendingBytes) a request is refused BUSY at once', async () => {
    const c = client({ maxPending: 100 })
    await c.waitFor('busyFor')
    const calls = Array.from({ length: 300 }, () => c.request('busyFor', { ms: 10 }, { timeout: 10000 }).then(() => 'ok', (e) => e.code))
    const t0 = Date.now()
    const first = await Promise.race([calls[299], new Promise((resolve) => setTimeout(() => resolve('pending'), 200))])
    expect(first).to.equal('ERR_ZEROMESH_BUSY') // at once, not after the others
    expect(Date.now() - t0).to.be.below(200)
    const out = await Promise.all(calls)
    expect(out.filter((x) => x === 'ok')).to.have.length(100)
    expect(out.filter((x) => x === 'ERR_ZEROMESH_BUSY')).to.have.length(200)
  })
})
