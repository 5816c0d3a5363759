// The one call path and lifecycle (client/call-path.js, client/calls.js): a request and a
// stream meet every routing case and every failover decision the same way, on scripted peers
// (helpers/fake-transport.js) and a virtual clock. Each row runs once as a request and once as
// a stream: the peers visited in order, and the outcome.
import { expect } from 'chai'
import { setup, track, tick, A, B, C } from '../helpers/fake-client.js'
import { insideOf } from '../../client/client.js'

const D = 'tcp://127.0.0.1:1004'
const SERVICE = { methods: ['echo'] }

/** A request or a stream of `echo(args)`; the stream's one item is its value. */
function call (kind, client, args, timeout, options = {}) {
  if (kind === 'request') return track(client.request('echo', args, { timeout, ...options }))
  const out = { done: false, items: [] }
  ;(async () => {
    try {
      for await (const x of client.stream('echo', args, { timeout, ...options })) out.items.push(x)
      Object.assign(out, { done: true, value: out.items[0] })
    } catch (err) {
      Object.assign(out, { done: true, code: err.code, err })
    }
  })()
  return out
}

/** A client on A, B, C (and D) that all serve echo and take streams. */
function cluster (options = {}, peers = [A, B, C]) {
  const t = setup({ strategy: 'round-robin', ...options }, peers)
  for (const ep of peers) t.net.define(ep, { service: SERVICE })
  return t
}

const rows = [
  {
    name: 'UNKNOWN_METHOD from one peer: goes to one that serves it',
    behave: { [A]: () => ['unknown'] },
    up: [A, B, C],
    visits: [A, B],
    result: 'ok',
  },
  {
    name: 'a draining peer: goes to the next',
    behave: { [A]: () => ['draining'] },
    up: [A, B, C],
    visits: [A, B],
    result: 'ok',
  },
  {
    name: 'a busy peer: goes to the next, and not back to the busy one',
    behave: { [A]: () => ['busy'] },
    up: [A, B, C],
    visits: [A, B],
    result: 'ok',
  },
  {
    name: 'every peer busy: waits for a place, then ERR_ZEROMESH_BUSY at its deadline',
    behave: { [A]: () => ['busy'], [B]: () => ['busy'], [C]: () => ['busy'] },
    up: [A, B, C],
    timeout: 300,
    result: 'ERR_ZEROMESH_BUSY',
    check: ({ client, r, at }) => { expect(at).to.be.within(295, 305); expect(client.stats().waited).to.equal(1); expect(r.err.retryable).to.equal(true) },
  },
  {
    // A drain is not an attempt (as busy): with every peer stopping, the call waits for one
    // that is not (a rollout's replacement) until its deadline, sending nothing meanwhile.
    name: 'every peer draining: each tried once, then it waits for another until its deadline: ERR_ZEROMESH_DRAINING',
    behave: { [A]: () => ['draining'], [B]: () => ['draining'], [C]: () => ['draining'] },
    up: [A, B, C],
    visits: [A, B, C],
    result: 'ERR_ZEROMESH_DRAINING',
    check: ({ at, r, client }) => { expect(at).to.be.within(995, 1005); expect(r.err.retryable).to.equal(true); expect(client.stats()).to.include({ retries: 0, budgetExhausted: 0 }) },
  },
  {
    name: 'its peer lost before it answered (idempotent): goes to the next after the grace for answers in flight',
    behave: { [A]: () => ['silent'] },
    up: [A, B, C],
    act: async ({ net }) => net.down(A),
    visits: [A, B],
    result: 'ok',
  },
  {
    name: 'its peer lost before it answered, not idempotent: ERR_ZEROMESH_CONNECTION_LOST, not sent again',
    behave: { [A]: () => ['silent'] },
    up: [A, B, C],
    options: { idempotent: false },
    act: async ({ net }) => net.down(A),
    visits: [A],
    result: 'ERR_ZEROMESH_CONNECTION_LOST',
    check: ({ at }) => expect(at).to.be.below(100),
  },
  {
    name: 'every peer refused this client at the handshake: ERR_ZEROMESH_HANDSHAKE at once, not at the deadline',
    up: [],
    act: async ({ net }) => { for (const ep of [A, B, C]) net.h.onRefused(ep, { kind: 'auth', code: null }) },
    result: 'ERR_ZEROMESH_HANDSHAKE',
    check: ({ at }) => expect(at).to.be.below(20),
  },
  {
    name: 'DNS names moved: with nothing up the names are resolved again, and the call goes where they point now',
    up: [],
    prepare: ({ client }) => {
      let refreshed = 0
      // The DNS seeds (transport/dns-seeds.js, tested against dnsmasq in test/scenarios): here
      // their answer is that the name now points at D.
      insideOf(client).mesh.dns = { refresh: () => { if (refreshed++ === 0) queueMicrotask(() => insideOf(client).mesh.lists.onDnsSeeds([D])) }, stop () {}, get refreshed () { return refreshed } }
    },
    act: async ({ net, client }) => {
      expect(insideOf(client).mesh.dns.refreshed).to.be.at.least(1)
      net.define(D, { service: SERVICE })
      await net.up(D)
    },
    visits: [D],
    result: 'ok',
  },
]

describe('one call path: each routing case for a request and for a stream (fake transport, fake clock)', () => {
  for (const row of rows) {
    for (const kind of ['request', 'stream']) {
      it(`${kind}: ${row.name}`, async () => {
        const { clock, net, client } = cluster()
        for (const [ep, behave] of Object.entries(row.behave ?? {})) net.peers.get(ep).behave = behave
        for (const ep of row.up) await net.up(ep)
        row.prepare?.({ client, net })
        const t0 = clock.now()
        const r = call(kind, client, 'x', row.timeout ?? 1000, row.options)
        await tick(clock, 5)
        await row.act?.({ net, client })
        let at = null
        for (let i = 0; i < (row.timeout ?? 1000) + 20 && at === null; i++) { await tick(clock, 1); if (r.done) at = clock.now() - t0 }
        if (row.visits) expect(net.log.map((x) => x[0])).to.deep.equal(row.visits)
        expect(net.log.every((x) => (x[3] === 'stream') === (kind === 'stream'))).to.equal(true)
        if (row.result === 'ok') expect(r.value, r.err?.message).to.equal('x')
        else expect(r.code, r.err?.message).to.equal(row.result)
        row.check?.({ client, r, at })
        await client.close()
      })
    }
  }

  for (const kind of ['request', 'stream']) {
    // Seen in the lab (a host of 10 blackholed): an idempotent request used its 3 attempts on
    // three peers of that one host.
    const [A1, A2, B1] = ['tcp://127.0.0.1:1001', 'tcp://127.0.0.1:1002', 'tcp://127.0.0.2:1001']
    for (const [name, peers, visits] of [
      ['a retry goes to a peer on another host than the one tried, while there is one', [A1, A2, B1], [A1, B1]],
      ['with one host only, a retry goes to another peer on it', [A1, A2], [A1, A2]],
    ]) {
      it(`${kind}: ${name}`, async () => {
        const { clock, net, client } = cluster({}, peers)
        net.peers.get(A1).behave = () => ['silent']
        for (const ep of peers) await net.up(ep)
        const r = call(kind, client, 'x', 1000)
        await tick(clock, 5)
        await net.down(A1)
        for (let i = 0; i < 1000 && !r.done; i++) await tick(clock, 1)
        expect(net.log.map((x) => x[0])).to.deep.equal(visits)
        expect(r.value, r.err?.message).to.equal('x')
        await client.close()
      })
    }

    it(`${kind}: a client in zone a with two idle peers in each zone stays in zone a, 60 of 60`, async () => {
      const { clock, net, client } = setup({ zone: 'a' }, [A, B, C, D])
      for (const [ep, zone] of [[A, 'a'], [B, 'b'], [C, 'a'], [D, 'b']]) net.define(ep, { service: { ...SERVICE, labels: { zone } } })
      for (const ep of [A, B, C, D]) await net.up(ep)
      for (let i = 0; i < 60; i++) {
        const r = call(kind, client, i, 1000)
        await tick(clock, 3)
        expect(r.value).to.equal(i)
      }
      const where = {}
      for (const [ep] of net.log) where[ep] = (where[ep] ?? 0) + 1
      expect((where[A] ?? 0) + (where[C] ?? 0)).to.equal(60)
      expect(where[A]).to.be.above(10) // both local peers share it
      expect(where[C]).to.be.above(10)
      await client.close()
    })
  }
})

describe('a stream its peer ended at the deadline (fake transport, fake clock)', () => {
  it('STREAM_END REMOTE ERR_ZEROMESH_EXPIRED reads as ERR_ZEROMESH_TIMEOUT with items, not a remote error', async () => {
    const { clock, net, client } = cluster()
    net.peers.get(A).behave = () => ['remote', 'the stream\'s deadline passed', 'ERR_ZEROMESH_EXPIRED']
    await net.up(A)
    const r = call('stream', client, 'x', 5000)
    await tick(clock, 20)
    expect(r.code).to.equal('ERR_ZEROMESH_TIMEOUT')
    expect(r.err.items).to.equal(0)
    await client.close()
  })
})
