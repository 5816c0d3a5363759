// What only real ZeroMQ sockets show of the request path: replies coalesced into one frame
// within the default frame limit (ZMQ_MAXMSGSIZE drops a larger one), and a request waiting
// for a peer that binds its endpoint again (a reconnect). Everything else a request does is
// specified once, in both worlds: test/behaviour/requests.test.js and request-checks.test.js.
import { expect } from 'chai'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { holdPort } from '../helpers/processes.js'

const handlers = {
  echo: (args) => args,
}

describe('request/reply over ZeroMQ', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  it('replies coalesced into one frame never pass the default frame limit, whatever the peer\'s own (a client at the default drops a larger frame)', async () => {
    const p = await h.peer({ handlers: { big: () => Buffer.alloc(600000, 1) }, maxMessageSize: 4 * 1024 * 1024 })
    const c = h.client({ seeds: [p.endpoint], timeout: 3000 })
    await c.request('big')
    const replies = await Promise.all([1, 2, 3, 4].map(() => c.request('big')))
    expect(replies.map((r) => r.length)).to.deep.equal([600000, 600000, 600000, 600000])
  })

  it('a request waits for a peer that comes up before its deadline', async () => {
    // The port is held until the peer binds it: released early, another test's socket took it
    // (EADDRINUSE in CI, with the suites' workers side by side).
    const held = await holdPort()
    const ep = `tcp://127.0.0.1:${held.port}`
    const c = h.client({ seeds: [ep] })
    const pending = c.request('echo', 'late peer', { timeout: 5000 })
    await eventually(() => { // it found no peer there, and waits
      expect(c.peers().map((x) => x.state)).to.deep.equal(['down'])
      expect(c.stats().inflight).to.equal(1)
    })
    await held.release()
    await h.peer({ bind: ep, handlers })
    expect(await pending).to.equal('late peer')
  })
})
