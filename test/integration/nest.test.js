// zeromesh/nest with real NestJS packages and real sockets: a Nest application's patterns
// served by ZeromeshServer (on the main thread, and in worker threads), called through
// ZeromeshClient; Nest's pipes, guards, interceptors and exception filters apply as with any
// transport. The application is test/fixtures/nest-app.mjs.
import 'reflect-metadata'
import { expect } from 'chai'
import net from 'node:net'
import { NestFactory } from '@nestjs/core'
import { lastValueFrom, toArray, firstValueFrom, scan, take } from 'rxjs'
import { ZeromeshServer, ZeromeshClient, ZeromeshRecord, ZEROMESH_TRANSPORT } from 'zeromesh/nest'
import { InvalidInputError, RemoteError, Client } from 'zeromesh'
import { ClientProxy } from '@nestjs/microservices'
import { AppModule, sums } from '../fixtures/nest-app.mjs'
import { eventually } from '../helpers/eventually.js'

const APP_MODULE = new URL('../fixtures/nest-app.mjs', import.meta.url)
const rejection = async (observable) => {
  try { await lastValueFrom(observable) } catch (err) { return err }
  throw new Error('expected an error')
}

describe('NestJS on zeromesh (zeromesh/nest)', function () {
  this.timeout(30000)
  const apps = []
  const clients = []
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close()
    for (const a of apps.splice(0)) await a.close()
  })

  async function microservice (options = {}, setup = () => {}, owners = apps) {
    const server = new ZeromeshServer({ bind: 'tcp://127.0.0.1:0', ...options })
    setup(server)
    const app = await NestFactory.createMicroservice(AppModule, { strategy: server, logger: false })
    owners.push(app)
    await app.listen()
    return { app, server, endpoint: server.unwrap().endpoint }
  }
  function client (endpoint, options = {}) {
    const c = new ZeromeshClient({ seeds: [endpoint], timeout: 5000, ...options })
    clients.push(c)
    return c
  }

  for (const threads of [0, 2]) {
    describe(threads === 0 ? 'handlers on the main thread' : 'handlers in 2 worker threads', () => {
      const options = threads === 0 ? {} : { threads, module: APP_MODULE, threadLogger: false }
      // The cases that ask nothing of the server's options or its end share one application
      // (its threads take a second or more to start), closed after them.
      const kept = []
      let shared = null
      const sharedMicroservice = () => (shared ??= microservice(options, undefined, kept))
      after(async () => { for (const a of kept.splice(0)) await a.close() })

      it('@MessagePattern handlers answer send(): string and object patterns, every value of an Observable, headers and the deadline in the RPC context', async () => {
        const { endpoint, server } = await sharedMicroservice()
        const c = client(endpoint)
        expect(await lastValueFrom(c.send('echo', { a: 1 }))).to.deep.equal({ a: 1 })
        expect(await lastValueFrom(c.send({ cmd: 'run', service: 'typed' }, 5))).to.deep.equal({ cmd: 'typed', data: 5 }) // keys in any order: Nest sorts them
        expect(await lastValueFrom(c.send('lastOfMany', {}).pipe(toArray()))).to.deep.equal([1, 2, 3])
        expect(await lastValueFrom(c.send('context', new ZeromeshRecord({}, { headers: { tenant: 'acme' } })))).to.deep.equal({ headers: { tenant: 'acme' }, pattern: 'context', remaining: true })
        const served = server.unwrap().service()
        expect(served.methods).to.include.members(['echo', 'ticks', '{"cmd":"run","service":"typed"}', 'sums.add'])
        expect(served.streams).to.deep.equal(['ticks'])
        expect(served.events).to.deep.include({ event: 'orders.placed', group: 'billing' })
        if (threads > 0) {
          const ids = new Set()
          for (let i = 0; i < 20 && ids.size < 2; i++) for (const r of await Promise.all([lastValueFrom(c.send('spin', { ms: 20 })), lastValueFrom(c.send('spin', { ms: 20 }))])) ids.add(r.threadId)
          expect(ids.size).to.equal(2) // both threads serve
          expect([...ids].every((id) => id > 0)).to.equal(true) // neither is the main thread
        }
      })

      it('every value of a plain @MessagePattern\'s Observable reaches the caller in order (Nest\'s sum-rpc "streaming"); a zeromesh request gets the last', async () => {
        const { endpoint } = await sharedMicroservice()
        const c = client(endpoint)
        expect(await lastValueFrom(c.send({ cmd: 'streaming' }, [1, 2, 3, 4, 5]).pipe(scan((a, b) => a + b)))).to.equal(15)
        expect(await lastValueFrom(c.send({ cmd: 'streaming' }, []).pipe(toArray()))).to.deep.equal([])
        const raw = new Client({ seeds: [endpoint], timeout: 5000 })
        try {
          expect(await raw.request('{"cmd":"streaming"}', [1, 2, 3])).to.equal(3)
          expect(await raw.request('{"cmd":"streaming"}', [1, 2, 3], { values: true })).to.deep.equal([1, 2, 3])
        } finally {
          await raw.close()
        }
      })

      it('replies from several servers (Nest\'s broadcast and multicast specs): with all: true each server\'s values come as emitted, and the caller\'s take(2) ends them', async () => {
        const one = await sharedMicroservice()
        const two = await microservice({ ...options, seeds: [one.endpoint] })
        const c = client(one.endpoint)
        await eventually(() => expect(c.unwrap().peers().filter((p) => p.state === 'up')).to.have.length(2))
        const all = new ZeromeshRecord({}, { all: true })
        expect(await lastValueFrom(c.send({ cmd: 'broadcast' }, all).pipe(scan((a, b) => a + b), take(2)))).to.equal(2)
        await eventually(() => expect(one.server.unwrap().stats().inflight + two.server.unwrap().stats().inflight).to.equal(0)) // unsubscribed: both ended
        const each = await lastValueFrom(c.send('whoAmI', new ZeromeshRecord({}, { all: true })).pipe(toArray()))
        expect(each).to.have.length(4) // [pid, threadId] from each server, in each server's order
        expect(await lastValueFrom(c.send('lastOfMany', {}).pipe(toArray()))).to.deep.equal([1, 2, 3]) // without all: one server
      })

      it('no place held past the caller: never-completing Observables cut by their deadline give their places back, and app.close() does not wait for them', async () => {
        const { app, endpoint, server } = await microservice({ ...options, maxInflight: 2 })
        const c = client(endpoint)
        const unsubscribed = []
        const channel = new BroadcastChannel('zeromesh-nest-app')
        const subscribed = []
        channel.onmessage = (e) => { if (e.data.unsubscribed !== undefined) unsubscribed.push(e.data.unsubscribed); if (e.data.subscribed !== undefined) subscribed.push(e.data.subscribed) }
        try {
          // Twice maxInflight, in two waves: the first gives its places back once cut (held, the peer would stay full).
          for (const wave of [[1, 2], [3, 4]]) {
            const cut = await Promise.all(wave.map((id) => rejection(c.send('never', new ZeromeshRecord({ id }, { timeout: 300, idempotent: false })))))
            expect(cut.map((e) => e.code)).to.deep.equal(['ERR_ZEROMESH_TIMEOUT', 'ERR_ZEROMESH_TIMEOUT'])
            await eventually(() => expect(server.unwrap().stats().inflight).to.equal(0))
          }
          expect(await lastValueFrom(c.send('echo', new ZeromeshRecord({ ok: 1 }, { timeout: 2000 })))).to.deep.equal({ ok: 1 })
          // Each Observable that ran was unsubscribed; with threads, a request queued behind
          // another of its wave may reach its deadline unrun (never subscribed), and no thread
          // was terminated for a handler that ended when its signal aborted.
          await eventually(() => expect([...unsubscribed].sort()).to.deep.equal([...subscribed].sort()))
          expect(subscribed.filter((id) => id <= 2)).to.not.have.length(0)
          expect(subscribed.filter((id) => id > 2)).to.not.have.length(0)
          if (threads > 0) expect(server.unwrap().stats().threads).to.include({ abandoned: 0 })
          expect(server.unwrap().stats().inflight).to.equal(0)
          // A caller that gives up (unsubscribes) cancels it: the peer has nothing left to drain.
          const sub = c.send('never', new ZeromeshRecord({ id: 5 }, { timeout: 20000 })).subscribe({ error: () => {} })
          await eventually(() => expect(server.unwrap().stats().inflight).to.equal(1))
          sub.unsubscribe()
          await eventually(() => expect(unsubscribed).to.include(5))
          expect(subscribed).to.include(5)
          const t0 = performance.now()
          await app.close()
          apps.splice(apps.indexOf(app), 1)
          expect(performance.now() - t0).to.be.below(5000) // the drain timeout is 10 s; nothing runs
        } finally {
          channel.close()
        }
      })

      if (threads === 0) it('a Promise handler keeps its place until it settles, and one that settles well after its signal aborted is counted (overran)', async () => {
        const { endpoint, server } = await microservice({ ...options, maxInflight: 1 })
        const c = client(endpoint)
        expect((await rejection(c.send('hang', new ZeromeshRecord({ after: 400 }, { timeout: 200, idempotent: false })))).code).to.equal('ERR_ZEROMESH_TIMEOUT')
        expect(server.unwrap().stats().inflight).to.equal(1) // aborted, not settled: still its place
        await eventually(() => expect(server.unwrap().stats()).to.include({ inflight: 0, overran: 1 }))
      })

      // Nest 12 has packet metadata; Nest 11.2 has the processing hooks but no metadata.
      it('the processing hooks run around every handler; packet metadata (Nest 12) reaches ctx.getMetadata(), and is undefined without it', async () => {
        const seen = []
        const { endpoint } = await microservice(options, (server) => {
          server.setOnProcessingStartHook((transportId, context, done) => { seen.push(['start', transportId === ZEROMESH_TRANSPORT, context.getPattern()]); return done() })
          server.setOnProcessingEndHook((transportId, context) => { seen.push(['end', context.getPattern()]) })
        })
        const c = client(endpoint)
        expect(await lastValueFrom(c.send('metadata', {}))).to.equal(null)
        const metadata = typeof ClientProxy.prototype.setOnDispatchHook === 'function'
        if (metadata) {
          c.setOnDispatchHook((packet) => { packet.metadata = { traceId: 'abc-1', Tenant: 'Acme' } })
          expect(await lastValueFrom(c.send('metadata', {}))).to.deep.equal({ traceId: 'abc-1', Tenant: 'Acme' })
        }
        expect(await lastValueFrom(c.send('lastOfMany', {}).pipe(toArray()))).to.deep.equal([1, 2, 3])
        await lastValueFrom(c.emit('cache.clear', { id: 1 }))
        expect(seen).to.deep.equal([
          ['start', true, 'metadata'], ['end', 'metadata'],
          ...(metadata ? [['start', true, 'metadata'], ['end', 'metadata']] : []),
          ['start', true, 'lastOfMany'], ['end', 'lastOfMany'],
          ['start', true, 'cache.clear'], ['end', 'cache.clear'],
        ])
      })

      it('an RpcException reaches the caller with its message and code; any other error as Nest hides it', async () => {
        const { endpoint } = await sharedMicroservice()
        const c = client(endpoint)
        const err = await rejection(c.send('rpcFail', {}))
        expect(err).to.be.instanceOf(RemoteError)
        expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'E_OUT_OF_STOCK', message: 'no more widgets' })
        expect(await rejection(c.send('rpcFailText', {}))).to.include({ remoteCode: null, message: 'plain words' })
        expect(await rejection(c.send('plainFail', {}))).to.include({ remoteCode: null, message: 'Internal server error' })
      })

      it('guards, interceptors and pipes apply as with any Nest transport', async () => {
        const { endpoint } = await sharedMicroservice()
        const c = client(endpoint)
        expect((await rejection(c.send('guarded', {}))).message).to.equal('Forbidden resource')
        expect(await lastValueFrom(c.send('guarded', new ZeromeshRecord({}, { headers: { tenant: 'acme' } })))).to.equal('let in')
        expect(await lastValueFrom(c.send('wrapped', {}))).to.deep.equal({ wrapped: 42 })
        expect(await lastValueFrom(c.send('doubled', { n: 4 }))).to.equal(8)
      })

      it('a pattern marked { stream: true } streams: send() gives each value, and the peer says so before the first byte', async () => {
        const { endpoint } = await sharedMicroservice()
        const c = client(endpoint)
        expect(await lastValueFrom(c.send('ticks', { n: 5 }).pipe(toArray()))).to.deep.equal([0, 1, 2, 3, 4].map((i) => ({ i })))
        expect(c.unwrap().streaming('ticks')).to.equal(true)
        expect(c.unwrap().streaming('echo')).to.equal(false)
        // Unsubscribing early cancels the stream on the peer.
        expect(await firstValueFrom(c.send('ticks', { n: 100000 }))).to.deep.equal({ i: 0 })
      })

      it('emit() publishes to the @EventPattern\'s group and gives { delivered } once the handler\'s Observable completed; a handler\'s error reaches the publisher', async () => {
        const { endpoint } = await sharedMicroservice()
        const c = client(endpoint)
        const handled = []
        const channel = new BroadcastChannel('zeromesh-nest-app') // the handlers post what they finished, from any thread
        channel.onmessage = (e) => handled.push(e.data)
        try {
          const out = await lastValueFrom(c.emit('orders.placed', { id: 7, ms: 50 }))
          const acked = Date.now()
          expect(out).to.deep.equal({ delivered: [{ group: 'billing', endpoint }] })
          await eventually(() => expect(handled.map((h) => h.id)).to.include(7))
          const h = handled.find((x) => x.id === 7)
          expect(h.group).to.equal('billing')
          expect(h.at).to.be.at.most(acked) // the ack came after the handler's Observable completed
        } finally {
          channel.close()
        }
        const err = await rejection(c.emit('orders.refused', {}))
        expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'E_REFUSED', message: 'cannot take it' })
        expect(err.failed).to.have.length(1)
      })

      it('a contract\'s pattern checks its input on both sides: a bad input never leaves the client, and a raw one is refused by the peer with its issues', async () => {
        const { endpoint, server } = await sharedMicroservice()
        const c = client(endpoint)
        expect(await lastValueFrom(c.send(sums.methods.add, { a: 1, b: 2 }))).to.deep.equal({ sum: 3 })
        const local = await rejection(c.send(sums.methods.add, { a: 'one', b: 2 }))
        expect(local).to.be.instanceOf(InvalidInputError)
        const remote = await rejection(c.send('sums.add', { a: 'one', b: 2 }))
        expect(remote).to.be.instanceOf(InvalidInputError)
        expect(remote.issues[0].path).to.deep.equal(['a'])
        expect(server.unwrap().service().contracts.map((x) => x.name)).to.deep.equal(['sums'])
        expect(await lastValueFrom(c.emit(sums.events.added, { sum: 3 }))).to.have.property('delivered')
        expect(await rejection(c.emit(sums.events.added, { sum: 'three' }))).to.be.instanceOf(InvalidInputError)
      })
    })
  }

  it('a spinning handler in a thread never makes the peer look dead: the main thread answers while both threads spin', async () => {
    const { endpoint } = await microservice({ threads: 2, module: APP_MODULE, threadLogger: false })
    const c = client(endpoint)
    const spinning = Promise.all([lastValueFrom(c.send('spin', { ms: 1500 })), lastValueFrom(c.send('spin', { ms: 1500 }))])
    const raw = new Client({ seeds: [endpoint], timeout: 3000 })
    try {
      const t0 = Date.now()
      const members = await raw.members(endpoint) // answered by the main thread while both threads spin
      expect(Date.now() - t0).to.be.below(1000)
      expect(members[0].state).to.equal('alive')
    } finally {
      await raw.close()
    }
    await spinning
  })

  it('fast, Nest-shaped failures: nothing listening fails ECONNREFUSED within connectTimeout; a pattern no live peer handles fails at once with Nest\'s words', async () => {
    const closed = net.createServer()
    await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = closed.address().port
    await new Promise((resolve) => closed.close(resolve)) // a port nothing listens on
    const dead = client(`tcp://127.0.0.1:${port}`, { timeout: 5000, connectTimeout: 500 })
    let t0 = performance.now()
    const refused = await rejection(dead.send('echo', {}))
    expect(performance.now() - t0).to.be.below(2000)
    expect(refused.code).to.equal('ECONNREFUSED')
    expect(refused.cause.code).to.equal('ERR_ZEROMESH_NO_PEERS')

    const { endpoint } = await microservice()
    const c = client(endpoint, { timeout: 5000 })
    await lastValueFrom(c.send('echo', {})) // the peer known, and what it serves
    t0 = performance.now()
    const none = await rejection(c.send('nope', {}))
    expect(performance.now() - t0).to.be.below(500)
    expect(none.message).to.equal('There is no matching message handler defined in the remote service.')
    expect(none.code).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD')
    // A first call to a new client: it learns the peer, then fails at once too (one deadline).
    const fresh = client(endpoint, { timeout: 5000 })
    t0 = performance.now()
    expect((await rejection(fresh.send('nope', {}))).message).to.equal('There is no matching message handler defined in the remote service.')
    expect(performance.now() - t0).to.be.below(2000)
    // A record's timeout is checked before any time is counted against it (it was taken as 1 ms).
    for (const timeout of [-1, 1.5, 'soon', 0]) expect((await rejection(c.send('echo', new ZeromeshRecord({}, { timeout })))).code, String(timeout)).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    // Asked to wait for a peer that serves it: waits within its timeout.
    t0 = performance.now()
    expect((await rejection(c.send('nope', new ZeromeshRecord({}, { timeout: 400, waitForPeer: true })))).code).to.equal('ERR_ZEROMESH_NO_PEERS')
    expect(performance.now() - t0).to.be.within(350, 2000)
  })

  it('emit() runs the handler on every server instance, as Nest\'s pub/sub transports do; grouped instances share it; broadcast reaches every one', async () => {
    const handled = []
    const channel = new BroadcastChannel('zeromesh-nest-app')
    channel.onmessage = (e) => { if (e.data.cleared !== undefined) handled.push(e.data) }
    try {
      const one = await microservice()
      const two = await microservice({ seeds: [one.endpoint] })
      const c = client(one.endpoint)
      await eventually(() => expect(c.unwrap().peers().filter((p) => p.state === 'up')).to.have.length(2))
      const out = await lastValueFrom(c.emit('cache.clear', { id: 1 }))
      expect(out.delivered.map((d) => d.endpoint).sort()).to.deep.equal([one.endpoint, two.endpoint].sort())
      await eventually(() => expect(handled.filter((h) => h.cleared === 1)).to.have.length(2))
      expect(new Set(handled.map((h) => h.group)).size).to.equal(2) // each instance is a group of its own

      const three = await microservice({ group: 'cache', seeds: [one.endpoint] })
      const four = await microservice({ group: 'cache', seeds: [one.endpoint] })
      const g = client(three.endpoint)
      await eventually(() => expect(g.unwrap().peers().filter((p) => p.state === 'up')).to.have.length(4))
      await eventually(async () => {
        const d = (await lastValueFrom(g.emit('cache.clear', { id: 2 }))).delivered
        expect(d.filter((x) => x.group === 'cache')).to.have.length(1) // one of the group
        expect(d).to.have.length(3) // and each ungrouped instance
      })
      const all = await lastValueFrom(g.emit('cache.clear', new ZeromeshRecord({ id: 3 }, { broadcast: true })))
      expect(all.delivered.map((d) => d.endpoint).sort()).to.deep.equal([one, two, three, four].map((x) => x.endpoint).sort())
    } finally {
      channel.close()
    }
  })

  it('status, on() and unwrap() behave as Nest 11 and 12 define them; close() lets the calls in flight finish', async () => {
    const { endpoint, server } = await microservice()
    const statuses = []
    server.status.subscribe((s) => statuses.push(s))
    const c = client(endpoint)
    const clientStatuses = []
    c.status.subscribe((s) => clientStatuses.push(s))
    const peers = []
    c.on('peer', (p) => peers.push(p.state))
    await c.connect()
    expect(c.unwrap()).to.be.instanceOf(Client)
    await eventually(() => expect(peers).to.include('up'))
    const slow = lastValueFrom(c.send('slow', { ms: 300 }))
    const closing = c.close() // as Nest does at shutdown, with a call in flight
    expect(await slow).to.deep.equal({ slept: 300 })
    await closing
    expect(clientStatuses).to.deep.equal(['connected', 'disconnected'])
    expect(statuses).to.deep.equal(['connected'])
  })

  it('listen() fails loudly when the peer cannot start: the port is taken', async () => {
    const taken = net.createServer()
    await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve))
    try {
      const server = new ZeromeshServer({ bind: `tcp://127.0.0.1:${taken.address().port}` })
      const app = await NestFactory.createMicroservice(AppModule, { strategy: server, logger: false })
      let err = null
      try { await app.listen() } catch (e) { err = e }
      await app.close()
      expect(err?.message).to.match(/in use|EADDRINUSE/i)
    } finally {
      taken.close()
    }
  })

  it('refuses options that cannot work, saying what to give', () => {
    expect(() => new ZeromeshServer({ threads: 2 })).to.throw(/give module/)
    expect(() => new ZeromeshServer({ module: APP_MODULE })).to.throw(/give threads/)
    expect(() => new ZeromeshServer({ handlers: {} })).to.throw(/leave out handlers/)
    expect(() => new ZeromeshClient({ seeds: ['tcp://127.0.0.1:1'], drainTimeout: -1 })).to.throw(/drainTimeout/)
    // Issue 67, item 7: a client without seeds (a bare customClass) is refused where it is made, naming the option.
    expect(() => new ZeromeshClient()).to.throw(/ZeromeshClient\(options\): Client needs seeds/)
    expect(() => new ZeromeshClient({ seeds: ['tcp://127.0.0.1:1'], timeout: 0 })).to.throw(/ZeromeshClient\(options\).*timeout/)
  })
})
