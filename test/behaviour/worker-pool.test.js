// Handlers in worker threads, as a client sees them, in every world (test/helpers/worlds.js):
// a module's methods run in threads with their context, a thrown error keeps its code, a
// thread that ends fails over once and a poison request takes down two threads, never more;
// beyond threads + maxQueue a peer answers busy and the client waits for a place; at the drain
// timeout queued work goes elsewhere and running work is answered at once. The threads are
// real in both worlds (their work takes real time); what only the pool's own timing shows
// (hand-offs, grace, stalls, recycling, the main thread's delay): integration/worker-pool.test.js.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'

const WORK = new URL('../fixtures/work.js', import.meta.url)
const upCount = (c) => c.peers().filter((p) => p.state === 'up').length

for (const W of WORLDS) {
  describe(`worker-thread handlers (${W.name})`, function () {
    this.timeout(30000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    it('runs a module\'s methods in threads with ctx, over several threads; an unknown method fails at once', async () => {
      const p = await w.peer({ handlers: WORK, threads: 2 })
      const c = w.client({ seeds: [p.endpoint] })
      const where = await w.settle(c.request('whereAmI'))
      expect(where.threadId).to.be.above(0) // not the main thread
      expect(where.endpoint).to.equal(p.endpoint)
      expect(where.left).to.equal(true)
      const ids = new Set(await w.settle(Promise.all(Array.from({ length: 8 }, () => c.request('busyFor', { ms: 30 })))))
      expect(ids.size).to.equal(2)
      expect(p.stats().threads.busyMs).to.be.within(8 * 25, 8 * 30 + 200) // time the threads ran requests (busyFor counts in whole ms)
      expect((await failure(w, c.request('nope'))).code).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD')
    })

    it('threads: 0 runs the module on the main thread (no thread hop for I/O-bound handlers)', async () => {
      const p = await w.peer({ handlers: WORK, threads: 0 })
      const c = w.client({ seeds: [p.endpoint] })
      expect((await w.settle(c.request('whereAmI'))).threadId).to.equal(0)
      expect(p.stats().threads).to.equal(null)
    })

    it('a thrown error is ERR_ZEROMESH_REMOTE with its code; a result that cannot be encoded is a coded error too', async () => {
      const p = await w.peer({ handlers: WORK, threads: 1 })
      const c = w.client({ seeds: [p.endpoint] })
      const err = await failure(w, c.request('fail'))
      expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', message: 'failed in a thread', remoteCode: 'E_THREAD' })
      expect(await failure(w, c.request('failPlain'))).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: null })
      expect(await failure(w, c.request('notEncodable'))).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'ERR_ZEROMESH_ENCODE' })
    })

    it('an idempotent request whose thread ended goes to another peer once; one that ends every thread it reaches takes down two, never more', async () => {
      const a = await w.peer({ handlers: WORK, threads: 1 })
      const b = await w.peer({ handlers: WORK, threads: 1, seeds: [a.endpoint] })
      const aFirst = { select: (peers) => peers.find((p) => p.endpoint === a.endpoint) ?? peers[0] }
      const c = w.client({ seeds: [a.endpoint, b.endpoint], strategy: aFirst })
      await w.until(() => expect(upCount(c)).to.equal(2))
      expect(await w.settle(c.request('exitOn', { endpoint: a.endpoint }))).to.equal('ok') // ended a's thread, answered by b
      expect(a.stats().threads.crashed).to.equal(1)
      const err = await failure(w, c.request('exit', null)) // a poison request
      expect(err).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'ERR_ZEROMESH_WORKER_EXIT' })
      expect(a.stats().threads.crashed + b.stats().threads.crashed).to.equal(3) // the first, then two for the poison one (maxAttempts is 3)
    })

    it('beyond threads + maxQueue a peer answers busy at once, and the client waits for a place; queued work past its deadline is never run', async () => {
      const p = await w.peer({ handlers: WORK, threads: 1, maxQueue: 2 })
      const c = w.client({ seeds: [p.endpoint], maxAttempts: 1 })
      await w.settle(c.request('spin', { n: 10 }))
      const running = c.request('waitFor', { ms: 600 }, { timeout: 60000 }) // the thread's one place, for 600 ms of real time
      const queued = [1, 2].map(() => c.request('busyFor', { ms: 1 }, { timeout: 100 }).then(() => null, (err) => err.code))
      await w.until(() => expect(p.stats().inflight).to.equal(3))
      const waiting = c.request('busyFor', { ms: 1 }, { timeout: 60000 }) // refused busy: waits for a place
      await w.until(() => expect(c.stats().waiting).to.equal(1))
      expect(await w.settle(Promise.all(queued))).to.deep.equal(['ERR_ZEROMESH_TIMEOUT', 'ERR_ZEROMESH_TIMEOUT'])
      await w.settle(running)
      expect(await w.settle(waiting)).to.be.a('number') // ran once the running one freed its place
      await w.until(() => expect(p.stats().threads.expired).to.equal(2)) // dropped unrun
      // Refused once, and once more for each probe the client sent for a place (capacity.js:
      // after GROW_MS, on a machine slow enough that the running one had not answered by then,
      // as CI saw): never a blind retry. Its requests in flight there told it when a place freed.
      expect(p.stats().busy).to.equal(1 + c.stats().probes)
    })

    it('at the drain timeout, queued work is answered DRAINING (never run, the client goes elsewhere) and running work a remote error at once', async () => {
      const p = await w.peer({ handlers: WORK, threads: 1, maxQueue: 4, drainTimeout: 200 })
      const other = await w.peer({ handlers: { busyFor: () => 'the other peer' } })
      const prefer = { select: (peers) => peers.find((x) => x.endpoint === p.endpoint) ?? peers[0] }
      const c = w.client({ seeds: [p.endpoint, other.endpoint], strategy: prefer, discover: false })
      await w.until(() => expect(upCount(c)).to.equal(2))
      const running = c.request('busyFor', { ms: 1500 }, { idempotent: false, timeout: 10000 }).catch((e) => e)
      await w.until(() => expect(p.stats().threads.load).to.equal(1))
      const queued = [1, 2].map(() => c.request('busyFor', { ms: 10 }, { idempotent: false, timeout: 10000 }))
      await w.until(() => expect(p.stats().threads.load).to.equal(3))
      const stopped = p.stop()
      expect(await w.settle(Promise.all(queued))).to.deep.equal(['the other peer', 'the other peer'])
      expect(p.stats().threads.ran).to.equal(1)
      const cut = await w.settle(running) // it ran, and was cut short: a remote error, answered, not left hanging
      expect(cut).to.include({ code: 'ERR_ZEROMESH_REMOTE', remoteCode: 'ERR_ZEROMESH_WORKER_EXIT' })
      await w.settle(stopped)
    })
  })
}
