// A subscription that runs in every thread of a peer (issue 68, item 3): `eachThread: true`
// in a handler module's events export. A broadcast and a publish reach each of the peer's
// threads, and the ack says how many ran it (PROTOCOL.md 4.11); any other subscription runs
// in one thread, and its ack says nothing of threads.
import { expect } from 'chai'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'

const HANDLERS = new URL('../fixtures/each-thread-handlers.js', import.meta.url)

describe('a subscription in every thread (eachThread)', function () {
  this.timeout(20000)
  const h = harness()
  const runs = []
  let channel
  beforeEach(() => {
    runs.length = 0
    channel = new BroadcastChannel('zeromesh-each-thread')
    channel.onmessage = (e) => runs.push(e.data)
  })
  afterEach(async () => { channel.close(); await h.cleanup() })

  it('a broadcast and a publish run it in each of the peer\'s 2 threads, and the ack says 2; a plain subscription runs in one', async () => {
    const p = await h.peer({ handlers: HANDLERS, threads: 2 })
    const c = h.client({ seeds: [p.endpoint] })
    await eventually(() => expect(c.peers().filter((x) => x.service !== null)).to.have.length(1))
    expect(await c.broadcast('cache.drop', 'k1')).to.deep.equal({ delivered: [{ endpoint: p.endpoint, threads: 2 }], failed: [], unreached: [] })
    await eventually(() => expect(runs.filter((r) => r.key === 'k1').map((r) => r.threadId).sort()).to.have.length(2))
    expect(new Set(runs.filter((r) => r.key === 'k1').map((r) => r.threadId)).size).to.equal(2) // two threads, not one twice
    expect(await c.publish('cache.drop', 'k2')).to.deep.equal({ delivered: [{ group: 'cache.drop', endpoint: p.endpoint, threads: 2 }] })
    await eventually(() => expect(runs.filter((r) => r.key === 'k2')).to.have.length(2))
    expect(await c.publish('orders.placed', { id: 7 })).to.deep.equal({ delivered: [{ group: 'billing', endpoint: p.endpoint }] })
    await eventually(() => expect(runs.filter((r) => r.id === 7)).to.have.length(1))
  })

  it('a thread\'s failure fails the delivery with its error', async () => {
    const p = await h.peer({ handlers: HANDLERS, threads: 2 })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await c.publish('cache.fail', null).then(() => null, (e) => e)
    expect([err?.code, err?.remoteCode]).to.deep.equal(['ERR_ZEROMESH_REMOTE', 'E_CACHE'])
  })

  it('refuses an eachThread that is not a boolean, naming it', async () => {
    const err = await h.peer({ events: { x: { handler: () => {}, eachThread: 'yes' } } }).then(() => null, (e) => e)
    expect(err?.message).to.match(/eachThread must be true or false/)
  })
})
