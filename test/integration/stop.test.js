// What only real sockets show of a graceful stop: a raw socket's request during the quiet
// window is answered DRAINING, and a taken port fails start(). The rest of the stop is
// specified once, in both worlds: test/behaviour/stop.test.js.
import { expect } from 'chai'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { Peer } from '../../index.js'
import { onClock } from '../helpers/virtual-time.js'
import * as zmq from 'zeromq'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { QUIET_MS } from '../../peer/drain.js'
import { encodeRequest, decode, Status } from '../../protocol/index.js'

const handlers = {
  whoami: (args, ctx) => ctx.endpoint,
}

describe('graceful stop over ZeroMQ', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  it('an idle peer that is stopping keeps answering DRAINING until no request came for 100 ms, so a client that has not heard loses nothing', async () => {
    // The peer's time is a virtual clock over its real sockets: its quiet window is moved to
    // just short of its end, as long as a real wait would be, with no sleep.
    const clock = new VirtualClock(performance.now())
    const p = await onClock(clock, h.peer({ handlers, clock })) // a bind tried again waits on it (zmq-listener.js)
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
      await onClock(clock, stopped) // its quiet comes, and it closes
    } finally {
      raw.close()
    }
  })

  it('a peer bound to a taken port fails start() with a clear error', async () => {
    const a = await h.peer({ handlers })
    const b = new Peer({ bind: a.endpoint, handlers })
    const err = await rejectsWith(b.start(), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.match(/cannot bind .*Address already in use/i)
  })
})
