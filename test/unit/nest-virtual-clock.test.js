// zeromesh/nest on the in-memory network and the virtual clock (test/helpers/worlds.js): a
// Nest application served by ZeromeshServer and called through ZeromeshClient, with no real
// socket and no real timer, so its deadlines are exact: the Nest-shaped failures
// (ECONNREFUSED after connectTimeout, a pattern no peer handles at once, waitForPeer within
// its timeout), and close() that lets the calls in flight finish within drainTimeout.
import 'reflect-metadata'
import { expect } from 'chai'
import { NestFactory } from '@nestjs/core'
import { Module, Controller } from '@nestjs/common'
import { MessagePattern, EventPattern } from '@nestjs/microservices'
import { lastValueFrom, toArray, of } from 'rxjs'
import { ZeromeshServer, ZeromeshClient, ZeromeshRecord } from 'zeromesh/nest'
import { WORLDS, failure } from '../helpers/worlds.js'

const memory = WORLDS.find((W) => W.canKill) // the memory network on a virtual clock

describe('zeromesh/nest on the virtual clock', function () {
  this.timeout(20000)
  let w
  let slowBegun = 0 // slow handlers that began
  const apps = []
  const clients = []
  beforeEach(() => { w = memory.make(); slowBegun = 0 })
  afterEach(async () => {
    for (const c of clients.splice(0)) await w.settle(c.close())
    for (const a of apps.splice(0)) await w.settle(a.close())
    await w.cleanup()
  })

  /** The application's controller, whose slow handler sleeps on the world's clock. */
  function appModule (events) {
    class Handlers {
      echo (x) { return x }
      many () { return of(1, 2, 3) }
      slow (ms) { slowBegun++; return new Promise((resolve) => w.clock.setTimeout(() => resolve({ slept: ms }), ms)) }
      placed (order) { events.push(order.id) }
    }
    const m = (name) => Object.getOwnPropertyDescriptor(Handlers.prototype, name)
    for (const name of ['echo', 'many', 'slow']) Reflect.decorate([MessagePattern(name)], Handlers.prototype, name, m(name))
    Reflect.decorate([EventPattern('orders.placed')], Handlers.prototype, 'placed', m('placed'))
    Controller()(Handlers)
    class AppModule {}
    Module({ controllers: [Handlers] })(AppModule)
    return AppModule
  }

  async function server (events = []) {
    const s = new ZeromeshServer({ bind: `tcp://127.0.0.1:${7400 + apps.length}`, ...w.place() })
    const app = await NestFactory.createMicroservice(appModule(events), { strategy: s, logger: false })
    apps.push(app)
    await w.settle(app.listen())
    return s.unwrap().endpoint
  }

  function client (seeds, options = {}) {
    const c = new ZeromeshClient({ seeds, timeout: 5000, ...w.place(), ...options })
    clients.push(c)
    return c
  }

  it('send() gives each value of the handler\'s Observable, emit() gives { delivered } once the handler ran', async () => {
    const events = []
    const endpoint = await server(events)
    const c = client([endpoint])
    expect(await w.settle(lastValueFrom(c.send('echo', { a: 1 })))).to.deep.equal({ a: 1 })
    expect(await w.settle(lastValueFrom(c.send('many', {}).pipe(toArray())))).to.deep.equal([1, 2, 3])
    const out = await w.settle(lastValueFrom(c.emit('orders.placed', { id: 7 })))
    expect(out.delivered.map((d) => d.endpoint)).to.deep.equal([endpoint])
    expect(events).to.deep.equal([7])
  })

  it('Nest-shaped failures at their exact times: ECONNREFUSED at connectTimeout, no handler at once, waitForPeer to its timeout', async () => {
    const dead = client(['tcp://127.0.0.1:7999'], { connectTimeout: 500 })
    let t0 = w.clock.now()
    const refused = await failure(w, lastValueFrom(dead.send('echo', {})))
    expect(w.clock.now() - t0).to.be.within(500, 560)
    expect(refused.code).to.equal('ECONNREFUSED')
    expect(refused.cause.code).to.equal('ERR_ZEROMESH_NO_PEERS')
    const c = client([await server()])
    await w.settle(lastValueFrom(c.send('echo', {}))) // the peer known, and what it serves
    t0 = w.clock.now()
    const none = await failure(w, lastValueFrom(c.send('nope', {})))
    expect(w.clock.now() - t0).to.be.below(50)
    expect(none).to.include({ message: 'There is no matching message handler defined in the remote service.', code: 'ERR_ZEROMESH_UNKNOWN_METHOD' })
    for (const timeout of [-1, 1.5, 'soon']) expect((await failure(w, lastValueFrom(c.send('echo', new ZeromeshRecord({}, { timeout }))))).code, String(timeout)).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    t0 = w.clock.now()
    expect((await failure(w, lastValueFrom(c.send('nope', new ZeromeshRecord({}, { timeout: 400, waitForPeer: true }))))).code).to.equal('ERR_ZEROMESH_NO_PEERS')
    expect(w.clock.now() - t0).to.be.within(400, 450)
  })

  it('close() lets a call in flight finish within drainTimeout, on the client\'s clock; one that runs past it fails ClosedError', async () => {
    const endpoint = await server()
    const patient = client([endpoint], { drainTimeout: 10000 })
    await w.settle(lastValueFrom(patient.send('echo', {})))
    const slow = lastValueFrom(patient.send('slow', 3000)).then((v) => v, (err) => err)
    await w.until(() => expect(slowBegun).to.equal(1)) // the call is out: its handler began
    let t0 = w.clock.now()
    await w.settle(patient.close())
    expect(w.clock.now() - t0).to.be.within(2900, 3200)
    expect(await w.settle(slow)).to.deep.equal({ slept: 3000 })
    const hasty = client([endpoint], { drainTimeout: 1000 })
    await w.settle(lastValueFrom(hasty.send('echo', {})))
    const cut = lastValueFrom(hasty.send('slow', 3000)).then((v) => v, (err) => err)
    await w.until(() => expect(slowBegun).to.equal(2))
    t0 = w.clock.now()
    await w.settle(hasty.close())
    expect(w.clock.now() - t0).to.be.within(1000, 1100)
    expect((await w.settle(cut)).code).to.equal('ERR_ZEROMESH_CLOSED')
  })
})
