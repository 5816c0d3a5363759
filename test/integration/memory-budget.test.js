// A peer's byte budget for requests in flight (maxInflightBytes, issue 24 item 5): requests
// past it are answered BUSY without running, the budget comes back when requests are answered
// or cancelled, and it is an option with checks. Real sockets on 127.0.0.1.
import { expect } from 'chai'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { Peer, peerDefaults } from '../../index.js'
import { readFileSync } from 'node:fs'
import { sizeOption } from '../../bin/args.js'

describe('the byte budget of requests in flight (maxInflightBytes)', function () {
  this.timeout(20000)
  const h = harness()
  afterEach(() => h.cleanup())

  /** A peer whose `hold` handler waits until released; it counts the requests it ran. */
  async function holdingPeer (options) {
    const gates = []
    let ran = 0
    const p = await h.peer({
      ...options,
      handlers: { hold: (args, ctx) => { ran++; return new Promise((resolve) => gates.push(() => resolve(args.length))) } },
    })
    return { p, release: () => { for (const g of gates.splice(0)) g() }, ran: () => ran }
  }

  it('answers BUSY, without running it, a request that would pass the budget; the client waits, and it runs when the budget comes back with the answers', async () => {
    const { p, release, ran } = await holdingPeer({ maxInflightBytes: 1024 * 1024 })
    const c = h.client({ seeds: p.endpoint, maxAttempts: 1, timeout: 5000 })
    const big = Buffer.alloc(400 * 1024, 1)
    const first = [c.request('hold', big), c.request('hold', big)]
    await eventually(() => expect(ran()).to.equal(2))
    const err = await rejectsWith(c.request('hold', big, { timeout: 300 }), 'ERR_ZEROMESH_BUSY') // no room before its deadline
    expect(err.message).to.include('maxInflightBytes')
    const third = c.request('hold', big) // waits for room
    await eventually(() => expect(c.stats().waiting).to.equal(1))
    expect(ran()).to.equal(2) // never ran
    expect(p.stats().inflightBytes).to.be.above(800 * 1024)
    release()
    expect(await Promise.all(first)).to.deep.equal([big.length, big.length])
    await eventually(() => expect(ran()).to.equal(3)) // room again: the waiting one ran
    release()
    expect(await third).to.equal(big.length)
    expect(p.stats().inflightBytes).to.equal(0)
  })

  it('a request its client cancels gives its bytes back when its handler ends', async () => {
    const { p, release, ran } = await holdingPeer({ maxInflightBytes: 1024 * 1024 })
    const c = h.client({ seeds: p.endpoint, maxAttempts: 1 })
    const big = Buffer.alloc(400 * 1024, 1)
    await rejectsWith(c.request('hold', big, { timeout: 200 }), 'ERR_ZEROMESH_TIMEOUT')
    await eventually(() => expect(p.stats().cancelled).to.equal(1))
    expect(ran()).to.equal(1)
    release()
    await eventually(() => expect(p.stats().inflightBytes).to.equal(0))
  })

  it('is an option with a documented default, checked', () => {
    expect(peerDefaults.maxInflightBytes).to.equal(128 * 1024 * 1024)
    expect(() => new Peer({ maxInflightBytes: 10 })).to.throw(/maxInflightBytes/)
    expect(() => new Peer({ maxInflightBytes: '1m' })).to.throw(/maxInflightBytes/)
  })
})

describe('a peer past its memory limit (memoryLimit, issue 50)', function () {
  this.timeout(20000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('answers requests and streams busy, naming the limit, collects its heaps and closes its connections; with no limit it serves', async () => {
    // This test process is past 80% of 64 MiB from the start: the peer is "pressed" at once.
    const p = await h.peer({ handlers: { echo: (x) => x, async * count () { yield 1 } }, memoryLimit: 64 * 1024 * 1024 })
    // It collects, then (a collection not having helped) closes its connections, at most once
    // every 5 s: the client comes after that, so no close meets its requests in flight (CI saw
    // a request lost that way when it was sent between the first collection and the close).
    await eventually(() => expect(p.stats().memory.sheds).to.be.above(0))
    expect(p.stats().memory.collections).to.be.above(0)
    const c = h.client({ seeds: p.endpoint, maxAttempts: 1, timeout: 1000 })
    const err = await rejectsWith(c.request('echo', 'x'), 'ERR_ZEROMESH_BUSY')
    expect(err.message).to.match(/past 80% of its memory limit \(67108864 bytes\)/)
    const stream = await rejectsWith((async () => { for await (const x of c.stream('count', {})) void x })(), 'ERR_ZEROMESH_BUSY')
    expect(stream.message).to.match(/memory limit/)
    const calm = await h.peer({ handlers: { echo: (x) => x }, memoryLimit: 0 })
    expect(await h.client({ seeds: calm.endpoint }).request('echo', 'x')).to.equal('x')
    expect(calm.stats().memory).to.deep.equal({ collections: 0, sheds: 0 })
  })
})

describe('memory settings shipped (issue 24, item 5)', () => {
  const read = (f) => readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8')
  const ALLOCATOR = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_']

  it('the allocator settings of the command\'s sh header, the Dockerfile, the pm2 example and the test scripts agree', () => {
    const header = read('bin/zeromesh.js').split('\n')[1]
    const dockerfile = read('Dockerfile')
    const pm2 = read('examples/pm2/ecosystem.config.cjs')
    const { scripts } = JSON.parse(read('package.json')) // the test processes run as the command does: no allocator advice
    for (const name of ALLOCATOR) {
      const value = new RegExp(`${name}="\\$\\{${name}:-(\\d+)\\}"`).exec(header)?.[1]
      expect(value, `${name} in the sh header`).to.match(/^\d+$/)
      expect(dockerfile, `${name} in the Dockerfile`).to.match(new RegExp(`ENV .*${name}=${value}\\b`))
      expect(pm2, `${name} in the pm2 example`).to.include(`${name}: '${value}'`)
      for (const s of ['test:unit', 'test:process']) expect(scripts[s], `${name} in npm run ${s}`).to.include(`${name}=${value} `)
    }
  })

  it('the manifest sets the budget, and its memory limit holds 128 MiB plus 3x the budget', () => {
    const yaml = read('deploy/kubernetes/deployment.yaml')
    const budget = sizeOption(/name: ZEROMESH_MAX_INFLIGHT_BYTES\s+value: "([^"]+)"/.exec(yaml)[1], 'max-inflight-bytes', '')
    const limit = Number(/limits:\s+memory: (\d+)Mi/.exec(yaml)[1]) * 1024 * 1024
    expect(limit).to.be.at.least(128 * 1024 * 1024 + 3 * budget)
  })
})
