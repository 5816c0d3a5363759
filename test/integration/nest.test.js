// zeromesh/nest with real NestJS packages and real sockets: a Nest application's patterns
// served by ZeromeshServer (on the main thread, and in worker threads), called through
// ZeromeshClient; Nest's pipes, guards, interceptors and exception filters apply as with any
// transport. The application is test/fixtures/nest-app.mjs.
import 'reflect-metadata'
import { expect } from 'chai'
import net from 'node:net'
import { NestFactory } from '@nestjs/core'
import { lastValueFrom, toArray, firstValueFrom } from 'rxjs'
import { ZeromeshServer, ZeromeshClient, ZeromeshRecord } from 'zeromesh/nest'
import { InvalidInputError, RemoteError, Client } from 'zeromesh'
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

  async function microservice (options = {}) {
    const server = new ZeromeshServer({ bind: 'tcp://127.0.0.1:0', ...options })
    const app = await NestFactory.createMicroservice(AppModule, { strategy: server, logger: false })
    apps.push(app)
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

      it('@MessagePattern handlers answer send(): string and object patterns, an Observable\'s last value, headers and the deadline in the RPC context', async () => {
        const { endpoint, server } = await microservice(options)
        const c = client(endpoint)
        expect(await lastValueFrom(c.send('echo', { a: 1 }))).to.deep.equal({ a: 1 })
        expect(await lastValueFrom(c.send({ cmd: 'run', service: 'typed' }, 5))).to.deep.equal({ cmd: 'typed', data: 5 }) // keys in any order: Nest sorts them
        expect(await lastValueFrom(c.send('lastOfMany', {}).pipe(toArray()))).to.deep.equal([3])
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

      it('an RpcException reaches the caller with its message and code; any other error as Nest hides it', async () => {
        const { endpoint } = await microservice(options)
        const c = client(endpoint)
        const err = await rejection(c.send('rpcFail', {}))
        expect(err).to.be.instanceOf(RemoteError)
        expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'E_OUT_OF_STOCK', message: 'no more widgets' })
        expect(await rejection(c.send('rpcFailText', {}))).to.include({ remoteCode: null, message: 'plain words' })
        expect(await rejection(c.send('plainFail', {}))).to.include({ remoteCode: null, message: 'Internal server error' })
      })

      it('guards, interceptors and pipes apply as with any Nest transport', async () => {
        const { endpoint } = await microservice(options)
        const c = client(endpoint)
        expect((await rejection(c.send('guarded', {}))).message).to.equal('Forbidden resource')
        expect(await lastValueFrom(c.send('guarded', new ZeromeshRecord({}, { headers: { tenant: 'acme' } })))).to.equal('let in')
        expect(await lastValueFrom(c.send('wrapped', {}))).to.deep.equal({ wrapped: 42 })
        expect(await lastValueFrom(c.send('doubled', { n: 4 }))).to.equal(8)
      })

      it('a pattern marked { stream: true } streams: send() gives each value, and the peer says so before the first byte', async () => {
        const { endpoint } = await microservice(options)
        const c = client(endpoint)
        expect(await lastValueFrom(c.send('ticks', { n: 5 }).pipe(toArray()))).to.deep.equal([0, 1, 2, 3, 4].map((i) => ({ i })))
        expect(c.unwrap().streaming('ticks')).to.equal(true)
        expect(c.unwrap().streaming('echo')).to.equal(false)
        // Unsubscribing early cancels the stream on the peer.
        expect(await firstValueFrom(c.send('ticks', { n: 100000 }))).to.deep.equal({ i: 0 })
      })

      it('emit() publishes to the @EventPattern\'s group and gives { delivered } once the handler\'s Observable completed; a handler\'s error reaches the publisher', async () => {
        const { endpoint } = await microservice(options)
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
        const { endpoint, server } = await microservice(options)
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
