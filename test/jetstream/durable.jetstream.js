// Durable events against a real nats-server (started here: JetStream on, a temporary store,
// an ephemeral loopback port, stopped by PID) and real peer processes (test/fixtures/durable-peer.mjs).
// Run by `npm run test:jetstream` (.ci/run installs Debian's nats-server); `npm test` needs no NATS.
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { connect, headers as natsHeaders } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { NatsServer, closeAllNats, natsServerVersion } from '../helpers/nats-server.js'
import { runScript, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { durableEvents, DurableUnavailableError, Header, DeadCode } from '../../jetstream/index.js'
import { Client, Peer, InvalidArgumentError, BusyError } from '../../index.js'

const PEER = fileURLToPath(new URL('../fixtures/durable-peer.mjs', import.meta.url))
const EVENT = 'orders.placed'

/** The JSON lines a durable peer printed. */
function facts (c) {
  return c.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
}

/** A durable peer process, resolved once it reads its consumers. */
async function startPeer (url, subs, durable = {}, peer = {}) {
  const c = runScript(PEER, [JSON.stringify({ url, events: [EVENT, 'other.event'], subs, durable: { ackWait: 1000, backoff: [100], ...durable }, peer })])
  await eventually(() => {
    if (c.code !== undefined) throw new Error(`durable peer exited ${c.code ?? c.signal}: ${c.stderr}`)
    expect(facts(c).some((f) => f.t === 'ready')).to.equal(true)
  }, { timeout: 20000 })
  return c
}

const done = (c, group) => facts(c).filter((f) => f.t === 'done' && (group === undefined || f.group === group))
const started = (c) => facts(c).filter((f) => f.t === 'start')

describe(`durable events on a real nats-server (${natsServerVersion() ?? 'nats-server missing'})`, function () {
  this.timeout(120000)
  let nats
  const opened = []
  const open = async (o = {}) => {
    const d = await durableEvents({ servers: nats.url, events: [EVENT, 'other.event'], ...o })
    opened.push(d)
    return d
  }

  beforeEach(async () => {
    nats = new NatsServer()
    await nats.start()
  })

  afterEach(async () => {
    await killAll()
    for (const d of opened.splice(0)) await d.close().catch(() => {})
    await closeAllNats()
  })

  it('the publisher exits right after its publish resolves; a subscriber started later handles it (an existing group from where it was, a new group from the start with start: all, not with start: new)', async () => {
    // The group exists (its first peer ran once), then no peer of it runs.
    const first = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record' }])
    first.child.kill('SIGTERM')
    expect((await first.exited).code).to.equal(0)
    // The publisher: its own process, gone once its publish resolved.
    const pub = runScript(fileURLToPath(new URL('../fixtures/durable-publish.mjs', import.meta.url)), [nats.url, EVENT, JSON.stringify({ order: 7 }), 'order-7'])
    expect((await pub.exited).code, pub.stderr).to.equal(0)
    const stored = JSON.parse(pub.stdout)
    expect(stored).to.deep.equal({ id: 'order-7', stream: 'ZEROMESH_EVENTS', seq: 1, duplicate: false })
    const later = await startPeer(nats.url, [
      { event: EVENT, group: 'billing', mode: 'record' },
      { event: EVENT, group: 'audit@ops.v2', mode: 'record' },
    ], { start: 'all' })
    const fresh = await startPeer(nats.url, [{ event: EVENT, group: 'late', mode: 'record' }], { start: 'new' })
    await eventually(() => expect(done(later).map((f) => [f.group, f.id, f.payload.order]).sort()).to.deep.equal([['audit@ops.v2', 'order-7', 7], ['billing', 'order-7', 7]]), { timeout: 15000 })
    // A group made after the event with start: 'new' reads from its creation on.
    const d = await open()
    await d.publish(EVENT, { order: 8 }, { id: 'order-8' })
    await eventually(() => expect(done(fresh).map((f) => f.id)).to.deep.equal(['order-8']), { timeout: 15000 })
    expect(done(later, 'billing').map((f) => f.id).sort()).to.deep.equal(['order-7', 'order-8'])
  })

  it('a subscriber SIGKILLed inside its handler: another peer of the group handles that event; nothing acked is handled again; the duplicate is counted', async () => {
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'hang-on-flag' }])
    const d = await open()
    for (let n = 1; n <= 5; n++) await d.publish(EVENT, { n }, { id: `e${n}` })
    await eventually(() => expect(done(a).map((f) => f.id).sort()).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5']), { timeout: 15000 })
    await d.publish(EVENT, { n: 6, hang: true }, { id: 'e6' })
    await eventually(() => expect(started(a).map((f) => f.id)).to.include('e6'), { timeout: 15000 })
    a.child.kill('SIGKILL')
    await a.exited
    const b = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record' }])
    await eventually(() => expect(done(b).map((f) => f.id)).to.deep.equal(['e6']), { timeout: 15000 })
    expect(done(b)[0].deliveries, 'the second delivery of e6').to.equal(2)
    b.child.kill('SIGTERM')
    await b.exited
    const stats = facts(b).find((f) => f.t === 'stopped').stats
    expect(stats.deliveries).to.include({ received: 1, handled: 1, redelivered: 1 })
    // Nothing acked came again: e1..e5 were handled once, by a, and by nobody since.
    expect(started(b).map((f) => f.id)).to.deep.equal(['e6'])
  })

  it('a draining peer (SIGTERM) takes no new durable event, finishes and acks what it holds; the rest goes to the group\'s next peer, once each', async () => {
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record', delayMs: 500 }], { maxInflight: 2, ackWait: 20000 })
    const d = await open()
    for (let n = 1; n <= 6; n++) await d.publish(EVENT, { n }, { id: `d${n}` })
    await eventually(() => expect(started(a)).to.have.length(2), { timeout: 15000 })
    a.child.kill('SIGTERM')
    expect((await a.exited).code).to.equal(0)
    expect(done(a).map((f) => f.id).sort(), 'what it held, finished').to.deep.equal(started(a).map((f) => f.id).sort())
    expect(started(a), 'nothing taken past its capacity or after the drain began').to.have.length(2)
    const b = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record' }], { ackWait: 20000 })
    // Within far less than ackWait: nothing waited for a lost peer's ack.
    await eventually(() => expect(done(b)).to.have.length(4), { timeout: 10000 })
    const all = [...done(a), ...done(b)].map((f) => f.id).sort()
    expect(all).to.deep.equal(['d1', 'd2', 'd3', 'd4', 'd5', 'd6'])
    expect(done(b).every((f) => f.deliveries === 1), 'never delivered to the draining peer').to.equal(true)
  })

  it('maxAckPending: 1 keeps the order of publishes, a failed event holding the line until it succeeds, whatever the peer\'s capacity', async () => {
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'ordered', mode: 'record' }], { maxAckPending: 1, backoff: [200] }, { maxInflight: 64 })
    const d = await open()
    for (let n = 0; n < 20; n++) await d.publish(EVENT, { n, failOnce: n === 5 }, { id: `o${n}` })
    await eventually(() => expect(done(a)).to.have.length(20), { timeout: 20000 })
    expect(done(a).map((f) => f.payload.n)).to.deep.equal(Array.from({ length: 20 }, (_, n) => n))
    expect(Math.max(...started(a).map((f) => f.running)), 'one at a time').to.equal(1)
    expect(started(a).filter((f) => f.payload.n === 5).map((f) => f.deliveries)).to.deep.equal([1, 2])
  })

  it('a handler that always throws: maxDeliver attempts after their backoff, then the dead-letter stream with the error in its headers, and the onDeadLetter hook', async () => {
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'throw' }], { maxDeliver: 3, backoff: [100, 200] })
    const d = await open()
    await d.publish(EVENT, { n: 1 }, { id: 'poison-1', headers: { tenant: 't1' } })
    await eventually(() => expect(facts(a).filter((f) => f.t === 'dead')).to.have.length(1), { timeout: 15000 })
    expect(started(a).map((f) => f.deliveries)).to.deep.equal([1, 2, 3])
    expect(facts(a).find((f) => f.t === 'dead')).to.include({ id: 'poison-1', group: 'billing', attempts: 3, code: 'E_POISON', message: 'poison 1' })
    const letter = await readDeadLetters(nats.url, 1)
    expect(letter[0].subject).to.equal(`zeromesh.events-dead.${EVENT}`)
    expect(letter[0].headers).to.include({ [Header.ERROR_CODE]: 'E_POISON', [Header.ERROR_MESSAGE]: 'poison 1', [Header.ATTEMPTS]: '3', [Header.GROUP]: 'billing', [Header.EVENT]: EVENT, [Header.STREAM]: 'ZEROMESH_EVENTS', [Header.SEQ]: '1', [Header.HEADERS]: '{"tenant":"t1"}' })
    // It is no longer delivered to the group.
    await d.publish(EVENT, { n: 2 }, { id: 'poison-2' })
    await eventually(() => expect(facts(a).filter((f) => f.t === 'dead')).to.have.length(2), { timeout: 15000 })
    expect(started(a).filter((f) => f.id === 'poison-1')).to.have.length(3)
  })

  it('a handler past its timeout fails that attempt (ERR_ZEROMESH_TIMEOUT) and the event comes again; after maxDeliver, a dead letter; a slow handler within its timeout keeps its event past ackWait', async () => {
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'hang-on-flag', delayMs: 1500 }], { timeout: 2500, maxDeliver: 2, ackWait: 600 })
    const d = await open()
    await d.publish(EVENT, { slow: true }, { id: 'slow' }) // 1.5 s, past ackWait (0.6 s): it says it works
    await eventually(() => expect(done(a).map((f) => f.id)).to.deep.equal(['slow']), { timeout: 15000 })
    expect(started(a).filter((f) => f.id === 'slow'), 'not delivered again while it ran').to.have.length(1)
    await d.publish(EVENT, { hang: true }, { id: 'hung' })
    await eventually(() => expect(facts(a).filter((f) => f.t === 'dead')).to.have.length(1), { timeout: 20000 })
    expect(facts(a).find((f) => f.t === 'dead')).to.include({ id: 'hung', attempts: 2, code: DeadCode.TIMEOUT })
    expect(started(a).filter((f) => f.id === 'hung').map((f) => f.deliveries)).to.deep.equal([1, 2])
  })

  it('nats-server SIGKILLed and started again on the same store while events flow: every event acknowledged to the publisher is handled', async () => {
    // One at a time, 5 ms each: a backlog stored and not yet handled when the server dies.
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record', delayMs: 5 }], { maxInflight: 1 })
    const d = await open({ publishTimeout: 1000 })
    const acked = new Set()
    let unavailable = 0
    let restarted = false
    let backlog = 0
    const flow = (async () => {
      for (let n = 0; n < 300; n++) {
        const id = `ev-${n}`
        const end = Date.now() + 30000
        for (;;) { // the same id until stored: a publish retried after a lost confirmation is stored once
          try {
            await d.publish(EVENT, { n }, { id })
            acked.add(id)
            break
          } catch (err) {
            if (!(err instanceof DurableUnavailableError) || Date.now() > end) throw err
            unavailable++
            await new Promise((resolve) => setTimeout(resolve, 50)) // paced retry, not a condition wait
          }
        }
        if (n === 100) {
          backlog = acked.size - done(a).length
          await nats.stop('SIGKILL')
          restarted = nats.start()
        }
      }
    })()
    await flow
    await restarted
    expect(unavailable, 'publishes refused while NATS was down').to.be.above(0)
    expect(backlog, 'events stored and not handled when the server was killed').to.be.above(10)
    expect(acked.size).to.equal(300)
    await eventually(() => expect(new Set(done(a).map((f) => f.id)).size).to.equal(acked.size), { timeout: 40000 })
    for (const id of acked) expect(done(a).some((f) => f.id === id), id).to.equal(true)
  })

  it('two groups on one subject each get every event; ten peers in one group share its load within their capacities', async () => {
    const caps = [1, 1, 1, 1, 1, 2, 2, 2, 4, 4]
    const other = await startPeer(nats.url, [{ event: EVENT, group: 'audit', mode: 'record' }])
    const peers = await Promise.all(caps.map((cap) => startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record', delayMs: 40 }], { maxInflight: cap })))
    const d = await open()
    const N = 300
    await Promise.all(Array.from({ length: N }, (_, n) => d.publish(EVENT, { n }, { id: `x${n}` })))
    const all = () => peers.flatMap((p) => done(p))
    await eventually(() => expect(new Set(all().map((f) => f.id)).size).to.equal(N), { timeout: 60000 })
    await eventually(() => expect(new Set(done(other).map((f) => f.id)).size).to.equal(N), { timeout: 30000 })
    const counts = peers.map((p) => done(p).length)
    for (const [i, p] of peers.entries()) {
      expect(Math.max(...started(p).map((f) => f.running)), `peer ${i} ran at most its capacity ${caps[i]} at once`).to.be.at.most(caps[i])
      expect(counts[i], `peer ${i} took a share`).to.be.above(0)
    }
    expect(all().length, 'nothing failed, so nothing ran twice').to.equal(N)
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
    expect(mean(counts.slice(8)), `capacity 4 takes more than capacity 1: ${counts}`).to.be.above(mean(counts.slice(0, 5)))
  })

  it('bad input: a durable event name that is no subject, an event larger than NATS takes, a payload that does not decode: a clear error at the publisher or a dead letter, never a crashed peer', async () => {
    for (const bad of ['a b', 'a..b', 'a.*', 'a.>', '.a', 'tab\tx']) {
      await durableEvents({ servers: nats.url, events: [bad] }).then(() => expect.fail(`${bad} taken`), (err) => {
        expect(err).to.be.instanceOf(InvalidArgumentError)
        expect(err.message).to.include(JSON.stringify(bad))
      })
    }
    const a = await startPeer(nats.url, [{ event: EVENT, group: 'billing', mode: 'record' }], { maxDeliver: 2 })
    const d = await open()
    const err = await d.publish(EVENT, 'x'.repeat(2 * 1024 * 1024)).catch((e) => e)
    expect(err).to.be.instanceOf(InvalidArgumentError)
    expect(err.message).to.match(/more than the 1048576 bytes NATS takes/)
    // Bytes that are not MessagePack (0xc1 is never used), and headers that are not JSON, from another NATS client.
    const nc = await connect({ servers: nats.url })
    const { jetstream } = await import('@nats-io/jetstream')
    const js = jetstream(nc)
    await js.publish(`zeromesh.events.${EVENT}`, new Uint8Array([0xc1, 0x00]), { msgID: 'not-msgpack' })
    const h = natsHeaders()
    h.set(Header.HEADERS, '{not json')
    await js.publish(`zeromesh.events.${EVENT}`, new Uint8Array([0xa1, 0x61]), { msgID: 'bad-headers', headers: h })
    await d.publish(EVENT, { ok: true }, { id: 'good' })
    await eventually(() => expect(facts(a).filter((f) => f.t === 'dead').map((f) => [f.id, f.code, f.attempts]).sort()).to.deep.equal([['bad-headers', DeadCode.UNDECODABLE, 1], ['not-msgpack', DeadCode.UNDECODABLE, 1]]), { timeout: 15000 })
    await eventually(() => expect(done(a).map((f) => f.id)).to.deep.equal(['good']), { timeout: 15000 })
    expect(started(a).map((f) => f.id), 'the handler never ran the undecodable ones').to.deep.equal(['good'])
    await nc.close()
    expect(a.code, 'the peer still runs').to.equal(undefined)
  })

  it('NATS down: a publish fails at once with DurableUnavailableError (stored: false), nothing buffered; beyond maxPending, BusyError', async () => {
    const d = await open({ maxPending: 2 })
    // maxPending: two publishes wait for their answer, the third is refused at once.
    const three = [d.publish(EVENT, 1), d.publish(EVENT, 2), d.publish(EVENT, 3)]
    const outcomes = await Promise.allSettled(three)
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected'])
    expect(outcomes[2].reason).to.be.instanceOf(BusyError)
    await nats.stop('SIGKILL')
    await eventually(() => expect(d.stats().connected).to.equal(false), { timeout: 10000 })
    const t0 = Date.now()
    const errs = await Promise.all(Array.from({ length: 100 }, (_, n) => d.publish(EVENT, { n }).catch((e) => e)))
    for (const e of errs) {
      expect(e).to.be.instanceOf(DurableUnavailableError)
      expect(e).to.include({ code: 'ERR_ZEROMESH_DURABLE_UNAVAILABLE', retryable: true, stored: false })
    }
    expect(Date.now() - t0, 'refused at once, not after a timeout').to.be.below(1000)
    expect(d.stats().publishes.pending).to.equal(0)
    await nats.start()
    await eventually(() => expect(d.stats().connected).to.equal(true), { timeout: 15000 })
    expect((await d.publish(EVENT, { back: true }, { id: 'back' })).duplicate).to.equal(false)
  })

  it('a peer started while NATS is down starts, and reads its group once NATS is back', async () => {
    const d = await open()
    await nats.stop('SIGKILL')
    await eventually(() => expect(d.stats().connected).to.equal(false), { timeout: 10000 })
    const got = []
    const peer = new Peer({ durable: d, events: { [EVENT]: { group: 'billing', handler: (p, ctx) => { got.push(ctx.eventId) } } } })
    await peer.start()
    try {
      expect(d.stats().deliveries.pullErrors, 'its consumer could not be made').to.be.above(0)
      await nats.start()
      await eventually(() => expect(d.stats().consumers.map((c) => c.reading)).to.deep.equal([true]), { timeout: 15000 })
      expect((await d.publish(EVENT, 1, { id: 'after' })).seq).to.be.a('number')
      await eventually(() => expect(got).to.deep.equal(['after']), { timeout: 15000 })
    } finally {
      await peer.stop()
    }
  })

  it('a durable event never goes to the mesh: a peer does not state its durable subscriptions, a client refuses to broadcast one, and a client without the durable option finds no subscriber', async () => {
    const d = await open()
    const peer = new Peer({ durable: d, events: { [EVENT]: { group: 'billing', handler: () => {} }, 'mesh.event': () => {} } })
    await peer.start()
    try {
      expect(peer.service().events, 'what the mesh is told').to.deep.equal([{ event: 'mesh.event', group: 'mesh.event' }])
      const client = new Client({ seeds: [peer.endpoint], durable: d })
      const plain = new Client({ seeds: [peer.endpoint], timeout: 1500 })
      try {
        const err = await client.broadcast(EVENT, 1).catch((e) => e)
        expect(err).to.be.instanceOf(InvalidArgumentError)
        expect((await plain.publish(EVENT, 1).catch((e) => e)).code).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
        expect((await client.publish(EVENT, 1)).stream).to.equal('ZEROMESH_EVENTS')
      } finally {
        await client.close()
        await plain.close()
      }
    } finally {
      await peer.stop()
    }
  })
})

describe('the events guide\'s durable events snippet runs (docs/guides/events.md)', function () {
  this.timeout(60000)
  let nats
  before(async () => { nats = new NatsServer(); await nats.start() })
  after(async () => { await killAll(); await closeAllNats() })

  it('publishes, the billing peer charges the order with its event id, everything closes', async () => {
    const { readFileSync, writeFileSync, rmSync } = await import('node:fs')
    const text = readFileSync(new URL('../../docs/guides/events.md', import.meta.url), 'utf8')
    const code = [...text.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1]).find((b) => b.includes("from 'zeromesh/jetstream'"))
    expect(code, 'the durable events block').to.be.a('string')
    const program = [
      'const charge = (order, id) => console.log(`charged order ${order.id} as ${id}`)',
      code.replace("'nats://127.0.0.1:4222'", JSON.stringify(nats.url)).replace('// stored: JetStream has it', "await new Promise((resolve) => { const t = setInterval(() => { if (durable.stats().deliveries.handled === 1) { clearInterval(t); resolve() } }, 10) }) // stored"),
      'console.log(JSON.stringify({ id, stream, seq, duplicate }))',
    ].join('\n')
    const file = fileURLToPath(new URL('./guide-snippet.tmp.mjs', import.meta.url))
    writeFileSync(file, program)
    try {
      const c = runScript(file, [])
      const { code: exit } = await c.exited
      expect(exit, c.stderr).to.equal(0)
      const lines = c.stdout.trim().split('\n')
      expect(lines[0]).to.equal('charged order 7 as order-7')
      expect(JSON.parse(lines[1])).to.deep.equal({ id: 'order-7', stream: 'ZEROMESH_EVENTS', seq: 1, duplicate: false })
    } finally {
      rmSync(file, { force: true })
    }
  })
})

/** The first `n` dead letters, read with a plain NATS client: [{ subject, headers, data }]. */
async function readDeadLetters (url, n) {
  const nc = await connect({ servers: url })
  try {
    const jsm = await jetstreamManager(nc)
    const out = []
    for (let seq = 1; seq <= n; seq++) {
      const m = await jsm.streams.getMessage('ZEROMESH_EVENTS_DEAD', { seq })
      const headers = {}
      for (const [k, v] of m.header) headers[k] = v[0]
      out.push({ subject: m.subject, headers, data: m.data })
    }
    return out
  } finally {
    await nc.close()
  }
}
