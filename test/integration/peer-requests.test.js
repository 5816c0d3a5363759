// What a peer does with the requests of one connection: a request delivered twice runs once
// (the duplicate of a running request is dropped, one of a finished request gets the same
// reply again), CANCEL aborts a running one, and replies ready together leave in one frame.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { eventually } from '../helpers/eventually.js'
import { harness } from '../helpers/cluster.js'
import { encodeRequest, decode } from '../../protocol/index.js'
import { RecentRequests } from '../../peer/recent-requests.js'
import { ConnectionTable } from '../../peer/connections.js'
import { BulkReply } from '../../peer/reply-outbox.js'
import { insideOf } from '../../peer/peer.js'

describe('duplicate requests on a peer', () => {
  const h = harness()
  const sockets = []
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close()
    await h.cleanup()
  })

  it('runs a request id once per connection, answers a late duplicate from memory', async () => {
    let runs = 0
    const p = await h.peer({ handlers: { work: () => { runs++; return new Promise((resolve) => setTimeout(resolve, 50, runs)) } } })
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 3000 })
    sockets.push(s)
    s.connect(p.endpoint)
    const req = encodeRequest([[7, 'work', null, 2000]])
    await s.send([req])
    await s.send([req]) //                  while the first runs: dropped
    const [first] = await s.receive()
    expect(decode(first).replies[0]).to.include({ id: 7, value: 1 })
    await s.send([req]) //                  after it finished: the same reply again
    const [again] = await s.receive()
    expect(decode(again).replies[0]).to.include({ id: 7, value: 1 })
    expect(runs).to.equal(1)
    expect(p.stats().duplicates).to.equal(2)

    const other = new zmq.Dealer({ linger: 0, receiveTimeout: 3000 }) // another client: its own ids
    sockets.push(other)
    other.connect(p.endpoint)
    await other.send([req])
    const [theirs] = await other.receive()
    expect(decode(theirs).replies[0]).to.include({ id: 7, value: 2 })
  })

  it('keeps one memory per connection whatever its routing id, and answers a duplicate of a lone request with the same bytes', async () => {
    let runs = 0
    const p = await h.peer({ handlers: { now: () => ++runs } }) // synchronous: a lone request's reply is written in place
    const dealer = (routingId) => {
      const s = new zmq.Dealer({ linger: 0, receiveTimeout: 3000, ...(routingId === undefined ? {} : { routingId }) })
      sockets.push(s)
      s.connect(p.endpoint)
      return s
    }
    // libzmq's own 5-byte id, a user-set id of the same length, and a longer one
    const clients = [dealer(), dealer('ABCDE'), dealer('client-with-a-longer-id')]
    const req = encodeRequest([[42, 'now', null, 2000]])
    const firsts = []
    for (const s of clients) {
      await s.send([req])
      const [reply] = await s.receive()
      firsts.push(reply)
    }
    expect(firsts.map((f) => decode(f).replies[0].value)).to.deep.equal([1, 2, 3])
    for (const [i, s] of clients.entries()) {
      await s.send([req]) // a duplicate: answered from memory, with the same reply
      const [again] = await s.receive()
      expect(again.equals(firsts[i]), `client ${i}`).to.equal(true)
    }
    expect(runs).to.equal(3)
    expect(p.stats().duplicates).to.equal(3)
  })
})

describe('cancellation', () => {
  const h = harness()
  afterEach(() => h.cleanup())

  it('an aborted request aborts the handler\'s ctx.signal on the peer', async () => {
    let aborted = null
    const p = await h.peer({
      handlers: {
        long: (args, ctx) => new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => { aborted = ctx.signal.reason.message; resolve('gave up') })
        }),
      },
    })
    const c = h.client({ seeds: [p.endpoint] })
    await c.members(p.endpoint) // connected
    const ac = new AbortController()
    const pending = c.request('long', null, { signal: ac.signal, timeout: 5000 })
    await eventually(() => expect(p.stats().inflight).to.equal(1))
    ac.abort()
    await pending.catch(() => {})
    await eventually(() => expect(aborted).to.equal('cancelled by the client'))
    expect(p.stats().cancelled).to.equal(1)
  })
})

/** A duplicates memory over a table of connections; of(name) gives the memory of the connection named so. */
function memory (o) {
  const connections = new ConnectionTable()
  const r = new RecentRequests({ ...o, connections })
  return {
    of: (name) => r.of(connections.of(Buffer.from(name))),
    connections,
    get size () { return r.size },
    get generation () { return r.generation },
    get ring () { return r.ring },
  }
}

describe('recent requests memory', () => {
  it('remembers an id for at least half the window and at most the whole, and stays bounded', async () => {
    let t = 0
    const r = memory({ windowMs: 1000, max: 100, clock: { now: () => t } })
    const a = r.of('client-a')
    expect(a.begin(7)).to.equal('new')
    expect(a.begin(7)).to.equal('running')
    expect(r.of('client-b').begin(7)).to.equal('new') // ids are per connection
    const reply = Buffer.from('packed reply of 7')
    a.finish(7, reply)
    t = 499
    expect(r.of('client-a').begin(7)).to.deep.equal(reply)
    t = 999
    expect(r.of('client-a').begin(7)).to.deep.equal(reply) // in the previous generation
    t = 1500
    expect(r.of('client-a').begin(7)).to.equal('new') //          forgotten after the window
    for (let i = 0; i < 1000; i++) r.of(`client-${i % 7}`).begin(i)
    expect(r.size).to.be.at.most(100)
    const c = r.of('client-6')
    c.forget(993)
    expect(c.begin(993)).to.equal('new')
  })

  it('keeps replies as bytes in an arena: small and large, read back exactly, also when finished after a rotation', async () => {
    let t = 0
    const r = memory({ windowMs: 1000, max: 1e6, maxBytes: 64 * 1024 * 1024, clock: { now: () => t } })
    const c = r.of('client')
    const replies = new Map()
    for (let i = 0; i < 3000; i++) {
      c.begin(i)
      const bytes = Buffer.alloc(i % 7 === 0 ? 20000 + i : 1 + (i % 300), i % 251) // some larger than a chunk's quarter
      replies.set(i, bytes)
      c.finish(i, bytes)
    }
    c.begin(5000) //                        running across a rotation...
    t = 600
    const again = r.of('client')
    again.finish(5000, Buffer.from('late')) // ...finished in the previous generation
    for (const [i, bytes] of replies) expect(again.begin(i).equals(bytes), `reply ${i}`).to.equal(true)
    expect(again.begin(5000).toString()).to.equal('late')
  })

  it('starts a new generation once half of maxBytes of replies is remembered', async () => {
    const r = memory({ windowMs: 1000, max: 100, maxBytes: 1000, clock: { now: () => 0 } })
    const c = r.of('client')
    for (let i = 0; i < 20; i++) { c.begin(i); c.finish(i, Buffer.alloc(100)) }
    expect(r.generation).to.be.at.least(3)
    expect(r.size * 100).to.be.at.most(1000 + 100)
  })

  it('holds at most maxBytes of replies when many requests arrive before any finishes (200 of 900 KiB held 180 MB)', async () => {
    const r = memory({ windowMs: 10000, max: 20000, maxBytes: 16 * 1024 * 1024, clock: { now: () => 0 } })
    const c = r.of('client')
    for (let i = 0; i < 200; i++) expect(c.begin(i)).to.equal('new') // all arrive in one turn
    let kept = 0
    for (let i = 0; i < 200; i++) c.finish(i, Buffer.alloc(900 * 1024, i))
    for (const arena of [c.currentArena, c.previousArena]) for (const ch of arena.chunks) kept += ch.length
    for (const m of [c.current, c.previous]) for (const h of m.values()) if (h !== null && typeof h !== 'number') kept += h.length
    for (const ch of r.ring.chunks) kept += ch?.length ?? 0
    expect(kept).to.be.at.least(3 * 1024 * 1024) // the ring holds 4 (a quarter of maxBytes)
    expect(kept).to.be.at.most(16 * 1024 * 1024)
    const again = r.of('client')
    for (let i = 0; i < 200; i++) {
      const seen = again.begin(i)
      if (seen !== 'new') expect(seen.equals(Buffer.alloc(900 * 1024, i)), `reply ${i}`).to.equal(true) // kept ones exact; the others run again
    }
  })

  it('keeps large replies (packed, and bulk with their id) in a ring of reused chunks: read back as copies, the oldest forgotten when written over', async () => {
    const r = memory({ windowMs: 10000, max: 1e6, maxBytes: 16 * 1024 * 1024, clock: { now: () => 0 } })
    const c = r.of('client')
    const value = (i) => Buffer.alloc(64000 + (i % 5), i % 251)
    for (let i = 0; i < 20; i++) { c.begin(i); c.finish(i, i % 2 === 0 ? new BulkReply(i, value(i)) : value(i)) }
    const chunks = [...r.ring.chunks]
    for (let i = 0; i < 20; i++) {
      const seen = c.begin(i)
      const bytes = i % 2 === 0 ? seen.value : seen
      expect(seen instanceof BulkReply, `reply ${i}`).to.equal(i % 2 === 0)
      if (i % 2 === 0) expect(seen.id).to.equal(i)
      expect(bytes.equals(value(i)), `reply ${i}`).to.equal(true)
      bytes.fill(0) // a copy: the ring's bytes stay
      expect((i % 2 === 0 ? c.begin(i).value : c.begin(i)).equals(value(i))).to.equal(true)
    }

    // 2000 more, generations of 20: the 4 MiB ring (a quarter of maxBytes) goes round in the chunks it has (no buffer per reply).
    const busy = memory({ windowMs: 10000, max: 40, maxBytes: 16 * 1024 * 1024, clock: { now: () => 0 } })
    const b = busy.of('client')
    for (let i = 0; i < 20; i++) { b.begin(i); b.finish(i, new BulkReply(i, value(i))) }
    const first = [...busy.ring.chunks]
    for (let i = 20; i < 2020; i++) { b.begin(i); b.finish(i, new BulkReply(i, value(i))) }
    expect(busy.generation).to.be.at.least(90)
    expect(busy.ring.chunks).to.have.length(4)
    for (const ch of first) expect(busy.ring.chunks).to.include(ch)
    expect(b.begin(2019).value.equals(value(2019))).to.equal(true)
    expect(chunks.length).to.equal(2)

    // Replies of 600 KB, one to a chunk: the memory holds 6 (3 a generation), the ring 4. The
    // ones written over are forgotten (they run again); the others read back.
    const big = (i) => Buffer.alloc(600000, i)
    const tight = memory({ windowMs: 10000, max: 6, maxBytes: 16 * 1024 * 1024, clock: { now: () => 0 } })
    const t = tight.of('client')
    for (let i = 0; i < 6; i++) { t.begin(i); t.finish(i, big(i)) }
    for (let i = 2; i < 6; i++) expect(t.begin(i).equals(big(i)), `reply ${i}`).to.equal(true)
    expect(t.previous.has(0)).to.equal(true) // still remembered, but written over:
    expect(t.begin(0)).to.equal('new')
  })

  it('gives the ring\'s chunks back after a generation with no large reply', async () => {
    let t = 0
    const r = memory({ windowMs: 1000, max: 100, clock: { now: () => t } })
    const c = r.of('client')
    c.begin(1); c.finish(1, Buffer.alloc(100000, 1))
    t = 600; r.of('client').begin(2) // a generation with a large reply ends: kept
    expect(r.ring.chunks).to.have.length(1)
    expect(r.of('client').begin(1).equals(Buffer.alloc(100000, 1))).to.equal(true)
    t = 1200; r.of('client').begin(3) // one with none: given back
    expect(r.ring.chunks).to.have.length(0)
    t = 1800; const later = r.of('client')
    later.begin(4); later.finish(4, Buffer.alloc(100000, 4))
    expect(later.begin(4).equals(Buffer.alloc(100000, 4))).to.equal(true)
  })

  it('forgets connections that were not used for two generations', async () => {
    let t = 0
    const r = memory({ windowMs: 1000, max: 100, clock: { now: () => t } })
    r.of('old').begin(1)
    t = 600; r.of('new').begin(1)
    expect([...r.connections.values()].map((c) => c.key)).to.have.members(['old', 'new'])
    t = 1200; r.of('new').begin(2)
    expect([...r.connections.values()].map((c) => c.key)).to.deep.equal(['new'])
  })
})

describe('reply coalescing on a peer', () => {
  const h = harness()
  const sockets = []
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close()
    await h.cleanup()
  })

  it('answers a lone request at once, and the requests of a bigger frame at the end of the turn', async () => {
    const p = await h.peer({ handlers: { echo: (a) => a } })
    const sent = []
    const core = insideOf(p) // its socket's message switch and transport, driven by hand
    const send = core.transport.send.bind(core.transport)
    core.transport.send = (id, frames) => { sent.push(decode(frames[0]).replies.map((r) => r.value)); send(id, frames) }
    const client = Buffer.from('test-client')
    core.onMessage(client, [encodeRequest([[1, 'echo', 'lone', 1000]])])
    expect(sent).to.deep.equal([['lone']]) // before onMessage returned
    core.onMessage(client, [encodeRequest([[2, 'echo', 'a', 1000], [3, 'echo', 'b', 1000]])])
    core.onMessage(client, [encodeRequest([[4, 'echo', 'c', 1000]])]) // joins the waiting replies
    expect(sent).to.have.length(1)
    await new Promise((resolve) => setImmediate(resolve))
    expect(sent).to.deep.equal([['lone'], ['a', 'b', 'c']])
  })

  it('answers a frame of 20 requests with one frame of 20 replies', async () => {
    const p = await h.peer({ handlers: { echo: (a) => a } })
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 3000 })
    sockets.push(s)
    s.connect(p.endpoint)
    await s.send([encodeRequest(Array.from({ length: 20 }, (_, i) => [i + 1, 'echo', i, 1000]))])
    const [frame] = await s.receive()
    const msg = decode(frame)
    expect(msg.replies.map((r) => r.value)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i))
    expect(msg.meta).to.have.property('mv')
  })
})
