// The `durable` option's contract on the peer and client side (runtime/durable-hook.js,
// peer/durable-host.js), in both worlds, with a log of the test's own behind the interface
// (the NATS side is tested against a real nats-server: test/jetstream/). What a peer hands
// its log: its durable subscriptions only, a way to run one through its admission and
// dispatch (ctx, middleware, threads), its free places; its drain; what a client sends it.
import { expect } from 'chai'
import { WORLDS } from '../helpers/worlds.js'
import { InvalidArgumentError } from '../../index.js'

/** A log that records what it is handed: the interface's four parts. */
function recordingLog (events) {
  const log = {
    names: new Set(events),
    host: null,
    drained: [],
    published: [],
    owns: (e) => log.names.has(e),
    publish: async (event, payload, options) => { log.published.push({ event, payload, options }); return { id: options?.id ?? 'x', stream: 'S', seq: log.published.length, duplicate: false } },
    attach: async (host) => { log.host = host },
    drain: async (ms) => { log.drained.push(ms) },
  }
  return log
}

for (const world of WORLDS) {
  describe(`the durable option (${world.name})`, function () {
    this.timeout(60000)
    let w
    beforeEach(() => { w = world.make() })
    afterEach(() => w.cleanup())

    it('a peer hands its log only its durable subscriptions and states only the others to the mesh', async () => {
      const log = recordingLog(['orders.placed'])
      const peer = await w.peer({ durable: log, maxInflight: 8, events: { 'orders.placed': { group: 'billing@eu', handler: () => {} }, 'cache.drop': () => {} } })
      peer.subscribe('orders.placed', () => {}) // the default group, at run time too
      expect(log.host.subscriptions()).to.deep.equal([{ event: 'orders.placed', group: 'billing@eu' }, { event: 'orders.placed', group: 'orders.placed' }])
      expect(peer.service().events).to.deep.equal([{ event: 'cache.drop', group: 'cache.drop' }])
      expect(log.host.free()).to.equal(8)
    })

    it('an event run through the host gets its ctx (event id, deliveries, group, kind), the middleware, and holds a place until it settles; a throw is its code and message', async () => {
      const log = recordingLog(['orders.placed'])
      const seen = []
      let release
      const peer = await w.peer({
        durable: log,
        maxInflight: 4,
        events: {
          'orders.placed': {
            group: 'billing',
            handler: async (p, ctx) => {
              seen.push({ p, id: ctx.eventId, deliveries: ctx.deliveries, group: ctx.group, kind: ctx.kind, tenant: ctx.headers.tenant })
              if (p.fail) throw Object.assign(new Error('declined'), { code: 'E_DECLINED' })
              if (p.wait) await new Promise((resolve) => { release = resolve })
            },
          },
        },
      })
      const kinds = []
      peer.use(async (ctx, next) => { kinds.push(`${ctx.kind}:${ctx.method}`); return next() })
      const host = log.host
      const ok = await w.settle(host.run('orders.placed', 'billing', { n: 1 }, { id: 'e1', deliveries: 2, headers: { tenant: 't1' }, timeoutMs: 1000, bytes: 10 }))
      expect(ok).to.deep.equal({ ok: true })
      expect(seen[0]).to.deep.equal({ p: { n: 1 }, id: 'e1', deliveries: 2, group: 'billing', kind: 'event', tenant: 't1' })
      expect(kinds).to.deep.equal(['event:orders.placed'])
      const failed = await w.settle(host.run('orders.placed', 'billing', { fail: true }, { id: 'e2', deliveries: 1, headers: {}, timeoutMs: 1000, bytes: 10 }))
      expect(failed).to.deep.equal({ ok: false, refused: false, code: 'E_DECLINED', message: 'declined' })
      const held = host.run('orders.placed', 'billing', { wait: true }, { id: 'e3', deliveries: 1, headers: {}, timeoutMs: 1000, bytes: 10 })
      await w.until(() => expect(release).to.be.a('function'))
      expect(host.free(), 'one place held').to.equal(3)
      release()
      expect(await w.settle(held)).to.deep.equal({ ok: true })
      expect(host.free()).to.equal(4)
      const unknown = await w.settle(host.run('orders.placed', 'nobody', {}, { id: 'e4', deliveries: 1, headers: {}, timeoutMs: 1000, bytes: 0 }))
      expect(unknown).to.include({ ok: false, refused: true, code: 'ERR_ZEROMESH_UNKNOWN_METHOD' })
    })

    it('stop() drains the log with the drain timeout, and a draining peer has no free place and refuses a run as DRAINING', async () => {
      const log = recordingLog(['orders.placed'])
      let release
      const peer = await w.peer({ durable: log, drainTimeout: 3000, events: { 'orders.placed': { group: 'billing', handler: () => new Promise((resolve) => { release = resolve }) } } })
      const host = log.host
      const running = host.run('orders.placed', 'billing', {}, { id: 'e1', deliveries: 1, headers: {}, timeoutMs: 5000, bytes: 0 })
      await w.until(() => expect(release).to.be.a('function'))
      const stopping = peer.stop()
      await w.until(() => expect(log.drained).to.deep.equal([3000]))
      await w.until(() => expect(host.draining).to.equal(true))
      expect(host.free()).to.equal(0)
      const refused = await w.settle(host.run('orders.placed', 'billing', {}, { id: 'e2', deliveries: 1, headers: {}, timeoutMs: 1000, bytes: 0 }))
      expect(refused).to.include({ ok: false, refused: true, code: 'ERR_ZEROMESH_DRAINING' })
      release()
      expect(await w.settle(running), 'what it held finishes').to.deep.equal({ ok: true })
      await w.settle(stopping)
    })

    it('a client sends a durable event to its log (through its middleware), any other to the mesh, and refuses to broadcast a durable one', async () => {
      const log = recordingLog(['orders.placed'])
      const peer = await w.peer({ events: { 'cache.drop': () => {} } })
      const client = w.client({ seeds: [peer.endpoint], durable: log })
      const kinds = []
      client.use(async (ctx, next) => { kinds.push(`${ctx.kind}:${ctx.method}`); return next() })
      expect(await w.settle(client.publish('orders.placed', { n: 1 }, { id: 'o-1' }))).to.deep.equal({ id: 'o-1', stream: 'S', seq: 1, duplicate: false })
      expect(log.published.map((p) => [p.event, p.payload, p.options.id])).to.deep.equal([['orders.placed', { n: 1 }, 'o-1']])
      const mesh = await w.settle(client.publish('cache.drop', 'k'))
      expect(mesh.delivered.map((d) => d.group)).to.deep.equal(['cache.drop'])
      const err = await w.settle(client.broadcast('orders.placed', 1)).catch((e) => e)
      expect(err).to.be.instanceOf(InvalidArgumentError)
      expect(kinds).to.deep.equal(['publish:orders.placed', 'publish:cache.drop', 'broadcast:orders.placed'])
      expect(log.published).to.have.length(1)
    })

    it('a durable option that is not one is refused where it enters', async () => {
      expect(() => w.client({ seeds: ['tcp://127.0.0.1:1'], durable: { owns: () => true } })).to.throw(InvalidArgumentError, /durable must be what zeromesh\/jetstream's durableEvents\(\) resolves with/)
    })
  })
}
