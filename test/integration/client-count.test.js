// A peer says how many clients it holds (`cc` in its answer to a question, PROTOCOL.md 4.4),
// the count clients compare to move off crowded peers (client/rebalance.js). Real sockets.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { encodePing, decode, MessageType } from '../../protocol/index.js'

describe('a peer\'s client count (cc)', function () {
  this.timeout(15000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('a question\'s PONG carries cc, the client connections heard from lately (the asker included); a heartbeat\'s does not', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x } })
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
      await eventually(async () => expect((await pong(2)).cc).to.equal(1), { timeout: 8000, interval: 250 }) // the three gone drop out within 3 s
    } finally {
      s.close()
    }
  })
})
