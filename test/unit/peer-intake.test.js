// The one way work enters a peer (peer/intake.js), for every kind: a request, an event and a
// stream each pass the same steps (id collision, duplicates, flow, admission, run, reply and
// remember) and follow the same refusal rule: no refusal is remembered (BUSY, DRAINING,
// UNKNOWN_METHOD), so an id refused for a method not served yet runs once the method is served.
// On the in-memory network and a virtual clock: a raw client sends the frames.
import { expect } from 'chai'
import { Peer } from '../../peer/peer.js'
import { MemoryNetwork } from '../../transport/memory.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { encodeRequest, encodeCancel, decode } from '../../protocol/codec.js'
import { encodeEvent } from '../../protocol/event-codec.js'
import { encodeStreamOpen } from '../../protocol/stream-codec.js'
import { MessageType, Status } from '../../protocol/constants.js'

const EP = 'tcp://127.0.0.1:7101'

/** A peer on host 'peer' and a raw client on host 'client' that records every answer it gets. */
async function setup (options = {}) {
  const clock = new VirtualClock()
  const net = new MemoryNetwork({ clock, random: () => 0.5, delay: 1 })
  const host = net.host('peer')
  const peer = new Peer({ bind: EP, clock: host.clock, transport: host.transport, ...options })
  const starting = peer.start()
  await clock.advance(10)
  await starting
  const got = [] // every answer, decoded
  const c = net.host('client').connector({ onUp () {}, onDown () {}, onMessage: (ep, frames) => got.push(decode(frames[0])) })
  c.connect(EP)
  await clock.advance(10)
  // Replies ready in one turn leave together at its end (a real setImmediate: transport/outbox.js).
  const settle = async (ms = 10) => { await clock.advance(ms); await new Promise((resolve) => setImmediate(resolve)); await clock.advance(ms) }
  const send = async (frame, ms = 10) => { c.send(EP, [frame]); await settle(ms) }
  /** The reply entries for `id` so far (REPLY entries and STREAM_END), in order. */
  const answers = (id) => got.flatMap((m) => m.type === MessageType.REPLY ? m.replies.filter((r) => r.id === id) : m.type === MessageType.STREAM_END && m.id === id ? [m] : [])
  const stop = async () => { await c.close(); const s = peer.stop(); await clock.advance(15000); await s }
  return { clock, peer, send, settle, answers, got, stop }
}

describe('the peer\'s one intake (peer/intake.js)', () => {
  it('a request refused UNKNOWN_METHOD is not remembered: once the method is served, the same id runs', async () => {
    const t = await setup({ handlers: {} })
    await t.send(encodeRequest([[7, 'late', 'x', 1000]]))
    expect(t.answers(7).map((r) => r.status)).to.deep.equal([Status.UNKNOWN_METHOD])
    t.peer.serve('late', (args) => `served ${args}`)
    await t.send(encodeRequest([[7, 'late', 'x', 1000]]))
    expect(t.answers(7).map((r) => r.status === Status.OK ? r.value : r.status)).to.deep.equal([Status.UNKNOWN_METHOD, 'served x'])
    await t.stop()
  })

  it('an acked event and a stream refused UNKNOWN_METHOD run with the same id once served, as a request does', async () => {
    const t = await setup({ handlers: {} })
    await t.send(encodeEvent([[8, 'placed', { n: 1 }, 1000, 'billing', true]]))
    await t.send(encodeStreamOpen(9, 'count', 2, 1000, 16, 65536, false))
    expect(t.answers(8).map((r) => r.status)).to.deep.equal([Status.UNKNOWN_METHOD])
    expect(t.answers(9).map((r) => r.status)).to.deep.equal([Status.UNKNOWN_METHOD])
    const seen = []
    t.peer.subscribe('placed', (payload) => { seen.push(payload.n) }, { group: 'billing' })
    t.peer.serve('count', async function * (n) { for (let i = 0; i < n; i++) yield i })
    await t.send(encodeEvent([[8, 'placed', { n: 1 }, 1000, 'billing', true]]))
    await t.send(encodeStreamOpen(9, 'count', 2, 1000, 16, 65536, false))
    expect(t.answers(8).map((r) => r.status)).to.deep.equal([Status.UNKNOWN_METHOD, Status.OK])
    expect(seen).to.deep.equal([1])
    expect(t.answers(9).map((r) => [r.status, r.count])).to.deep.equal([[Status.UNKNOWN_METHOD, 0], [Status.OK, 2]])
    await t.stop()
  })

  it('a refusal for a busy peer is not remembered, whatever the kind', async () => {
    let release
    const held = new Promise((resolve) => { release = resolve })
    const t = await setup({ handlers: { hold: () => held, echo: (x) => x }, maxInflight: 1, events: { placed: () => held } })
    await t.send(encodeRequest([[1, 'hold', null, 5000]]))
    await t.send(encodeRequest([[2, 'echo', 'a', 5000]]))
    await t.send(encodeEvent([[3, 'placed', null, 5000, 'placed', true]]))
    expect(t.answers(2).map((r) => r.status)).to.deep.equal([Status.BUSY])
    expect(t.answers(3).map((r) => r.status)).to.deep.equal([Status.BUSY])
    release('done')
    await t.settle()
    await t.send(encodeRequest([[2, 'echo', 'a', 5000]]))
    await t.send(encodeEvent([[3, 'placed', null, 5000, 'placed', true]]))
    expect(t.answers(2).map((r) => r.status)).to.deep.equal([Status.BUSY, Status.OK])
    expect(t.answers(3).map((r) => r.status)).to.deep.equal([Status.BUSY, Status.OK])
    await t.stop()
  })

  it('a duplicate of running work is dropped and one of finished work answered from memory, for requests and acked events; unacked events and streams are never remembered', async () => {
    let runs = 0
    let events = 0
    let open
    const gate = new Promise((resolve) => { open = resolve })
    const t = await setup({ handlers: { work: async () => { await gate; return ++runs } }, events: { placed: () => { events++ } } })
    await t.send(encodeRequest([[5, 'work', null, 1000], [5, 'work', null, 1000]])) // the second while the first runs: dropped
    await t.send(encodeRequest([[5, 'work', null, 1000]])) //                          still running: dropped
    open()
    await t.settle()
    await t.send(encodeRequest([[5, 'work', null, 1000]])) //                          finished: the same reply again
    expect(t.answers(5).map((r) => r.value)).to.deep.equal([1, 1])
    expect(runs).to.equal(1)
    await t.send(encodeEvent([[6, 'placed', null, 1000, 'placed', true]]))
    await t.send(encodeEvent([[6, 'placed', null, 1000, 'placed', true]]))
    expect(events).to.equal(1)
    expect(t.answers(6).map((r) => r.status)).to.deep.equal([Status.OK, Status.OK])
    await t.send(encodeEvent([[10, 'placed', null, 1000, 'placed', false], [10, 'placed', null, 1000, 'placed', false]]))
    expect(events).to.equal(3)
    expect(t.answers(10)).to.deep.equal([])
    expect(t.peer.stats().duplicates).to.equal(3) // two dropped while running, one answered again
    expect(t.peer.stats().events.duplicates).to.equal(1)
    await t.stop()
  })

  it('ids are shared across kinds: a request or an event taking an open stream\'s id is invalid, a stream taking a request\'s id too', async () => {
    let release
    const held = new Promise((resolve) => { release = resolve })
    const t = await setup({
      handlers: { slow: () => held, echo: (x) => x, ticks: async function * () { await held; yield 1 } },
      events: { placed: () => {} },
    })
    await t.send(encodeStreamOpen(20, 'ticks', null, 5000, 16, 65536, false))
    await t.send(encodeRequest([[20, 'echo', 'a', 1000]]))
    await t.send(encodeEvent([[20, 'placed', null, 1000, 'placed', true]]))
    expect(t.answers(20).map((r) => r.status)).to.deep.equal([Status.INVALID_REQUEST, Status.INVALID_REQUEST])
    await t.send(encodeRequest([[21, 'slow', null, 5000]]))
    await t.send(encodeStreamOpen(21, 'ticks', null, 5000, 16, 65536, false))
    expect(t.answers(21).map((r) => r.status)).to.deep.equal([Status.INVALID_REQUEST])
    release('x')
    await t.settle()
    expect(t.answers(21).map((r) => r.status)).to.deep.equal([Status.INVALID_REQUEST, Status.OK])
    expect(t.answers(20).map((r) => r.status)).to.deep.equal([Status.INVALID_REQUEST, Status.INVALID_REQUEST, Status.OK])
    await t.stop()
  })

  it('a cancelled request and a cancelled stream get no answer and give their places back', async () => {
    let aborted = 0
    const t = await setup({
      handlers: {
        wait: (args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => { aborted++; resolve('late') })),
        ticks: async function * (args, ctx) { await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)); aborted++ },
      },
    })
    await t.send(encodeRequest([[30, 'wait', null, 5000]]))
    await t.send(encodeStreamOpen(31, 'ticks', null, 5000, 16, 65536, false))
    expect(t.peer.stats().inflight).to.equal(2)
    await t.send(encodeCancel([30, 31]))
    expect(aborted).to.equal(2)
    expect(t.answers(30)).to.deep.equal([])
    expect(t.answers(31)).to.deep.equal([])
    expect(t.peer.stats().inflight).to.equal(0)
    await t.stop()
  })

  it('every kind passes the one admission door: busy, unknown and draining refusals, each counted by its kind, the running work by the dispatcher', async () => {
    let release
    const held = new Promise((resolve) => { release = resolve })
    const t = await setup({
      handlers: { hold: () => held, echo: (x) => x, ticks: async function * () { yield 1 } },
      events: { placed: () => {} },
      maxInflight: 1,
    })
    await t.send(encodeRequest([[1, 'hold', null, 60000]])) // holds the one place
    await t.send(encodeRequest([[2, 'echo', 'a', 1000], [3, 'nope', null, 1000]]))
    await t.send(encodeStreamOpen(4, 'ticks', null, 1000, 16, 65536, false))
    await t.send(encodeStreamOpen(5, 'nope', null, 1000, 16, 65536, false))
    await t.send(encodeEvent([[6, 'placed', null, 1000, 'placed', true], [7, 'nope', null, 1000, 'nope', true]]))
    const statuses = (...ids) => ids.map((id) => t.answers(id).map((r) => r.status))
    expect(statuses(2, 3, 4, 5, 6, 7)).to.deep.equal([[Status.BUSY], [Status.UNKNOWN_METHOD], [Status.BUSY], [Status.UNKNOWN_METHOD], [Status.BUSY], [Status.UNKNOWN_METHOD]])
    let s = t.peer.stats()
    expect({ requests: s.requests, unknown: s.unknown, busy: s.busy, drained: s.drained }).to.deep.equal({ requests: 5, unknown: 2, busy: 2, drained: 0 })
    expect({ refused: s.events.refused, unknown: s.events.unknown }).to.deep.equal({ refused: 1, unknown: 1 })
    expect(s.streams.refused).to.equal(2)
    // Draining: every kind is refused DRAINING at the one door, a method or a subscription it does not have too.
    const stopping = t.peer.stop()
    await t.settle()
    await t.send(encodeRequest([[8, 'echo', 'b', 1000], [9, 'nope', null, 1000]]))
    await t.send(encodeStreamOpen(10, 'ticks', null, 1000, 16, 65536, false))
    await t.send(encodeEvent([[11, 'placed', null, 1000, 'placed', true], [12, 'nope', null, 1000, 'nope', true]]))
    expect(statuses(8, 9, 10, 11, 12)).to.deep.equal([[Status.DRAINING], [Status.DRAINING], [Status.DRAINING], [Status.DRAINING], [Status.DRAINING]])
    s = t.peer.stats()
    expect({ requests: s.requests, unknown: s.unknown, busy: s.busy, drained: s.drained }).to.deep.equal({ requests: 8, unknown: 2, busy: 2, drained: 3 })
    expect({ refused: s.events.refused, unknown: s.events.unknown }).to.deep.equal({ refused: 2, unknown: 2 }) // an event nothing here subscribes to counts unknown, draining or not
    expect(s.streams.refused).to.equal(3)
    release('done')
    await t.settle()
    expect(t.answers(1).map((r) => r.value)).to.deep.equal(['done'])
    expect(t.peer.stats().ok).to.equal(1)
    await t.stop()
    await stopping
  })
})
