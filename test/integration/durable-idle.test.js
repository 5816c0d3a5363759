// A peer reading durable events is not idle (peer/idle-collect.js): its durable deliveries
// count as activity, as its mesh messages do, so it does not stop to run full collections while
// they flow. (Found by the durable events benchmark: a peer handling only durable events ran a
// full collection of its heaps every 10 s or more, as if idle, and was slower for it.)
import { expect } from 'chai'
import { Peer } from '../../index.js'
import { eventually } from '../helpers/eventually.js'

describe('a peer handling durable events is not idle', function () {
  this.timeout(30000)
  let peer
  let ballast
  afterEach(async () => { ballast = null; await peer?.stop() })

  it('no idle collection while durable events run; one once they stop', async () => {
    const collected = []
    const logger = { debug: (f, m) => { if (/^idle after a burst/.test(m)) collected.push(m) }, info () {}, warn () {}, error () {}, isLevelEnabled: () => true }
    let host = null
    const durable = { owns: (e) => e === 'orders.placed', publish: async () => ({}), attach: async (h) => { host = h }, drain: async () => {} }
    peer = new Peer({ durable, logger, memoryLimit: 0, events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
    await peer.start()
    // RSS well above what the peer started at, kept: the idle collector's cue (slack 32 MiB).
    ballast = Buffer.alloc(96 * 1024 * 1024, 1)
    const end = Date.now() + 4000 // past the collector's 2 s of quiet, twice its 1 s ticks
    let n = 0
    while (Date.now() < end) {
      await host.run('orders.placed', 'billing', { n }, { id: `e${n}`, deliveries: 1, headers: {}, timeoutMs: 1000, bytes: 8 })
      n++
      await new Promise((resolve) => setTimeout(resolve, 50)) // a flow of one event each 50 ms
    }
    expect(collected, `${n} durable events ran`).to.deep.equal([])
    // The same peer once nothing runs: the collector does fire (so the test can fail).
    await eventually(() => expect(collected).to.have.length(1), { timeout: 8000 })
  })
})
