// What streams hold for clients that do not read is capped for the peer as a whole, not only
// per stream (issue 50): a client may grant every stream 64 MiB of credit and open 64 of them
// on one connection. Seen in the hostile barrage (bench/cluster/barrage.js, "stream-hoarder"): 256
// streams of 1 MB items, never read, took `zeromesh peer` (handlers on threads) to 3.4 GB.
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { encodeStreamOpen } from '../../protocol/index.js'
import { figure } from '../helpers/figures.js'

const DEMO = fileURLToPath(new URL('../../demo/handlers.js', import.meta.url))
const MiB = 1024 * 1024

describe('streams no one reads, all together', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(() => h.cleanup())

  for (const threads of [1, 0]) {
    it(`16 streams of 1 MB items, each granted 64 MiB and never read, make what half of maxInflightBytes allows and ZeroMQ's queue holds, not their credit (handlers ${threads === 0 ? 'on the main thread' : 'on a thread'})`, async () => {
      const p = await h.peer({ handlers: DEMO, threads, maxInflightBytes: 16 * MiB })
      const s = new zmq.Dealer({ linger: 0, receiveHighWaterMark: 1, sendTimeout: 1000 })
      h.track(s)
      s.connect(p.endpoint)
      for (let i = 1; i <= 16; i++) await s.send([encodeStreamOpen(i, 'count', { n: 1000, size: 1000000 }, 60000, 1024, 64 * MiB, false)])
      // Until the streams stall at the cap: all 16 open, each with its first item, and no item
      // made for half a second (a peer that went by their credit would go on to 1,024).
      let held = 0
      let made = -1
      let madeAt = Date.now()
      await eventually(() => {
        const st = p.stats().streams
        held = Math.max(held, st.held)
        if (st.items !== made) { made = st.items; madeAt = Date.now() }
        expect(st.open).to.equal(16)
        expect(st.items).to.be.at.least(16)
        expect(Date.now() - madeAt, 'items still being made').to.be.at.least(500)
      }, { timeout: 10000, interval: 10 })
      const { items, open } = p.stats().streams
      figure(`${items} items of 1 MB made, at most ${(held / MiB).toFixed(1)} MiB held at once, ${open} streams open`)
      expect(open).to.equal(16)
      // Half the budget (8 MiB) waiting in the peer, plus an item each stream made as it
      // started, plus ZeroMQ's queue for the connection (32 frames) and the sockets' buffers.
      expect(held).to.be.at.most(8 * MiB + 16 * 1.1e6)
      expect(items).to.be.below(100) // their credit alone would allow 1,024 (16 x 64)
    })
  }
})
