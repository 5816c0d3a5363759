// A peer says how many clients it holds (`cc` in its answer to a question, PROTOCOL.md 4.4),
// the count clients compare to move off crowded peers (client/rebalance.js). Real sockets.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { onClock } from '../helpers/virtual-time.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { encodePing, decode, MessageType } from '../../protocol/index.js'

const WINDOW_MS = 3000 // a connection gone drops out of cc after this long (peer/client-count.js)

describe('a peer\'s client count (cc)', function () {
  this.timeout(15000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('a question\'s PONG carries cc, the client connections heard from lately (the asker included); a heartbeat\'s does not', async () => {
    // The peer's time is a virtual clock (its sockets real): its window is moved, not waited for.
    const clock = new VirtualClock(performance.now())
    const p = await onClock(clock, h.peer({ handlers: { echo: (x) => x }, clock }))
    const clients = [0, 1, 2].map(() => h.client({ seeds: p.endpoint }))
    await Promise.all(clients.map((c, i) => c.request('echo', i)))
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 3000 })
    try {
      s.connect(p.endpoint)
      const pong = async (seq) => {
        await s.send(encodePing(seq))
        for (;;) {
          const m = decode((await s.receive())[0])
          if (m.type === MessageType.PONG && m.seq === seq) return m.meta
        }
      }
      expect(await pong(1)).to.include({ cc: 4 })
      expect(await pong(0)).to.not.have.property('cc')
      await Promise.all(clients.map((c) => c.close()))
      await clock.advance(WINDOW_MS - 100)
      expect((await pong(2)).cc, 'within the window the three gone still count').to.equal(4)
      await clock.advance(101)
      expect((await pong(3)).cc, 'past it they drop out').to.equal(1)
    } finally {
      s.close()
      await onClock(clock, p.stop()) // its stop's waits are on its clock too
    }
  })
})
