// Graceful stop: requests in flight finish, new ones are refused DRAINING and the client
// goes to another peer; nothing fails.
import { expect } from 'chai'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { Peer } from '../../index.js'
import { eventually } from '../helpers/eventually.js'
import * as zmq from 'zeromq'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { QUIET_MS } from '../../peer/drain.js'
import { encodeRequest, decode, Status } from '../../protocol/index.js'

const handlers = {
  sleep: (args, ctx) => new Promise((resolve) => setTimeout(resolve, args.ms, ctx.endpoint)),
  whoami: (args, ctx) => ctx.endpoint,
}

async function bothUp (c) {
  await eventually(() => expect(c.peers().filter((x) => x.state === 'up')).to.have.length(2))
}

describe('graceful stop', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  it('finishes requests in flight before closing', async () => {
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    await c.request('whoami')
    const inflight = Array.from({ length: 20 }, () => c.request('sleep', { ms: 200 }))
    await eventually(() => expect(p.stats().inflight).to.equal(20))
    const t0 = Date.now()
    await p.stop()
    expect(Date.now() - t0).to.be.at.least(100) // it waited for them
    const out = await Promise.all(inflight)
    expect(out).to.have.length(20)
    expect(p.state).to.equal('stopped')
  })

  it('new requests during the drain go to another peer; zero failures, idempotent or not', async () => {
    const a = await h.peer({ handlers })
    const b = await h.peer({ handlers })
    const c = h.client({ seeds: [a.endpoint, b.endpoint], idempotent: false })
    await bothUp(c)
    const slow = Array.from({ length: 10 }, () => c.request('sleep', { ms: 300 }))
    await eventually(() => expect(a.stats().inflight + b.stats().inflight).to.equal(10))
    const stopping = a.stop()
    const during = []
    for (let i = 0; i < 40; i++) during.push(await c.request('whoami'))
    await stopping
    const results = await Promise.allSettled(slow)
    expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([])
    expect(during.filter((ep) => ep === a.endpoint)).to.have.length(0)
    // The client stopped using A: from a DRAINING answer, or from the leave in the member list.
    await eventually(() => expect(c.peers().some((x) => x.endpoint === a.endpoint && x.state === 'up')).to.equal(false))
  })

  it('with a single peer, a request during the drain fails with ERR_ZEROMESH_DRAINING at its deadline', async () => {
    const a = await h.peer({ handlers })
    const c = h.client({ seeds: [a.endpoint] })
    await c.request('whoami')
    const slow = c.request('sleep', { ms: 600 })
    await eventually(() => expect(a.stats().inflight).to.equal(1))
    const stopping = a.stop()
    await rejectsWith(c.request('whoami', null, { timeout: 200 }), 'ERR_ZEROMESH_DRAINING')
    expect(await slow).to.equal(a.endpoint)
    await stopping
  })

  it('an idle peer that is stopping keeps answering DRAINING until no request came for 100 ms, so a client that has not heard loses nothing', async () => {
    // The peer's time is a virtual clock over its real sockets: its quiet window is moved to
    // just short of its end, as long as a real wait would be, with no sleep.
    const clock = new VirtualClock(performance.now())
    const p = await h.peer({ handlers, clock })
    const raw = new zmq.Dealer({ linger: 0, receiveTimeout: 1000 })
    try {
      raw.connect(p.endpoint)
      await raw.send(encodeRequest([[1, 'whoami', null, 1000]]))
      expect(decode((await raw.receive())[0]).replies[0].status).to.equal(Status.OK)
      const stopped = p.stop() // nothing in flight: it used to close within a few ms
      await clock.advance(QUIET_MS - 10)
      await raw.send(encodeRequest([[2, 'whoami', null, 1000]]))
      const [frame] = await raw.receive() // before: EAGAIN after 1 s, the request lost
      expect(decode(frame).replies[0]).to.include({ id: 2, status: Status.DRAINING })
      let done = false
      stopped.then(() => { done = true })
      for (let i = 0; i < 100 && !done; i++) await clock.advance(QUIET_MS) // its quiet comes, and it closes
      await stopped
    } finally {
      raw.close()
    }
  })

  it('drainTimeout bounds the wait for work that never ends', async () => {
    const p = await h.peer({ handlers: { never: () => new Promise(() => {}) }, drainTimeout: 150 })
    const c = h.client({ seeds: [p.endpoint] })
    const pending = c.request('never', null, { timeout: 600 })
    await eventually(() => expect(p.stats().inflight).to.equal(1))
    const t0 = Date.now()
    await p.stop()
    expect(Date.now() - t0).to.be.within(100, 1500)
    await rejectsWith(pending, 'ERR_ZEROMESH_TIMEOUT')
  })

  it('stop() is idempotent, start() after stop() is refused, stop() before start() is fine', async () => {
    const p = await h.peer({ handlers })
    const s1 = p.stop()
    expect(p.stop()).to.equal(s1)
    await s1
    await rejectsWith(p.start(), 'ERR_ZEROMESH_CLOSED')
    const never = new Peer({ handlers })
    await never.stop()
    expect(never.state).to.equal('stopped')
  })

  it('a peer bound to a taken port fails start() with a clear error', async () => {
    const a = await h.peer({ handlers })
    const b = new Peer({ bind: a.endpoint, handlers })
    const err = await rejectsWith(b.start(), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.match(/cannot bind .*Address already in use/i)
  })
})
