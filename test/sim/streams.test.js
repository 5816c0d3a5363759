// Streams in the whole-system simulation (issue 26, item 5): real Peers and Clients on the
// in-memory network and a virtual clock (sim/system.js), with the request load
// of the other scenarios running beside. A peer that dies, or is cut off by a partition, in
// the middle of a stream ends it with a coded error carrying its count within the client's
// detection time (never a hang); the reader resumes from its cursor on another peer and gets
// every item exactly once; the requests beside it lose nothing.
import { expect } from 'chai'
import { SystemSim } from '../../sim/system.js'

const N = 400 // items in the whole stream

function streamingSim (seed) {
  return new SystemSim({
    seed,
    client: { heartbeatTimeout: 3000 },
    peerOptions: (endpoint, i, clock) => ({
      handlers: {
        echo: (args) => [endpoint, args],
        // An item every 5 ms of the peer's clock, from the cursor `from`.
        async * rows ({ from, n }, ctx) {
          for (let k = from; k < n && !ctx.signal.aborted; k++) {
            await new Promise((resolve) => clock.setTimeout(resolve, 5))
            yield { k, by: endpoint }
          }
        },
      },
    }),
  })
}

/**
 * Reads the whole stream with client `c`, resuming from its cursor after each failure;
 * `fault(endpoint)` is called once, with the serving peer, after `after` items.
 */
function reader (s, c, after, fault) {
  const state = { got: [], errors: [], done: false, faultAt: null, failedAt: null }
  state.promise = (async () => {
    let faulted = false
    for (let tries = 0; tries < 5 && !state.done; tries++) {
      const stream = c.stream('rows', { from: state.got.length, n: N }, { idleTimeout: 5000 })
      try {
        for await (const item of stream) {
          state.got.push(item.k)
          if (!faulted && state.got.length === after) {
            faulted = true
            state.faultAt = s.clock.now()
            fault(item.by)
          }
        }
        state.done = true
      } catch (err) {
        state.failedAt = s.clock.now()
        state.errors.push({ code: err.code, items: err.items, received: stream.received })
      }
    }
  })()
  return state
}

async function runUntil (s, state, maxMs) {
  for (let t = 0; t < maxMs && !state.done; t += 50) await s.run(50)
}

describe('streams in the whole system (simulated: 5 peers, 2 clients with requests beside, virtual clock)', function () {
  this.timeout(60000)

  for (const seed of [1, 2]) {
    it(`a peer killed mid-stream: ERR_ZEROMESH_CONNECTION_LOST with the count at once, resumed elsewhere, every item once (seed ${seed})`, async () => {
      const s = streamingSim(seed)
      try {
        await s.start()
        const state = reader(s, s.clients[0], 50, (ep) => s.kill(ep))
        await runUntil(s, state, 20000)
        expect(state.done, JSON.stringify(state.errors)).to.equal(true)
        expect(state.errors).to.have.length(1)
        expect(state.errors[0]).to.deep.include({ code: 'ERR_ZEROMESH_CONNECTION_LOST', items: state.errors[0].received })
        expect(state.failedAt - state.faultAt).to.be.below(100) // its connection closed: at once
        expect(state.got).to.deep.equal(Array.from({ length: N }, (_, k) => k))
        expect(s.counts.failed, JSON.stringify(s.counts.errors)).to.equal(0)
      } finally {
        await s.stop()
      }
    })

    it(`a partition cuts the serving peer off mid-stream: a coded error within the detection time, never a hang; resumed on the other side (seed ${seed})`, async () => {
      const s = streamingSim(seed)
      try {
        await s.start()
        const state = reader(s, s.clients[0], 50, (ep) => {
          s.faulty.add(ep)
          const h = s.host(ep).name
          s.net.partition([h], [...s.net.hosts.keys()].filter((x) => x !== h))
          s.clock.setTimeout(() => s.net.heal(), 8000)
        })
        await runUntil(s, state, 30000)
        expect(state.done, JSON.stringify(state.errors)).to.equal(true)
        expect(state.errors).to.have.length(1)
        expect(state.errors[0].code).to.equal('ERR_ZEROMESH_CONNECTION_LOST') // seeds 1-2: 3.75 s after the cut
        expect(state.errors[0].items).to.equal(state.errors[0].received)
        // The client's heartbeats notice a stalled connection after heartbeatTimeout (3 s).
        expect(state.failedAt - state.faultAt).to.be.within(2000, 5500)
        expect(state.got).to.deep.equal(Array.from({ length: N }, (_, k) => k))
        expect(s.counts.failed, JSON.stringify(s.counts.errors)).to.equal(0)
      } finally {
        await s.stop()
      }
    })
  }
})
