// Handlers in worker threads, what the pool's own timing and its threads' ends show: a thread
// that exits, one that runs past its deadline or its grace, a stall, hand-offs, the queue's
// time bound, recycling, and the main thread staying responsive while every thread works.
// What a client sees of the pool (results, errors, failover, busy, the drain) is specified
// once, in both worlds: test/behaviour/worker-pool.test.js.
import { expect } from 'chai'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { WorkerPool } from '../../peer/worker-pool.js'
import { RequestContext } from '../../peer/request-context.js'
import { systemClock } from '../../runtime/clock.js'
import { figure } from '../helpers/figures.js'

const WORK = new URL('../fixtures/work.js', import.meta.url)

describe('worker-thread handlers', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('a thread that calls process.exit() gives a coded error reply, is replaced, is logged once with its error and counted in the metrics, and the peer serves the next request', async () => {
    const logged = []
    const logger = { debug () {}, info () {}, warn () {}, error: (fields, message) => logged.push(message) }
    const p = await h.peer({ handlers: WORK, threads: 1, logger })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await rejectsWith(c.request('exit', null, { idempotent: false }), 'ERR_ZEROMESH_REMOTE')
    expect(err.remoteCode).to.equal('ERR_ZEROMESH_WORKER_EXIT')
    expect((await c.request('spin', { n: 1000 })).x).to.be.a('number')
    expect(p.stats().threads).to.include({ crashed: 1, replaced: 1, size: 1 })
    // Issue 68, item 2: it was silent.
    expect(logged).to.deep.equal(['handler thread exited with code 3; a new thread takes its place'])
    const { peerMetrics } = await import('../../ops/metrics.js')
    expect(await peerMetrics(p).metrics()).to.match(/^zeromesh_peer_thread_crashes_total 1$/m)
  })

  // Seen on every SIGTERM of `zeromesh peer --threads 2`: the stop's own terminate() of each
  // thread was taken for a crash, and logged as an error ("handler thread exited with code 1;
  // a new thread takes its place") before "stopped".
  it('a peer that stops logs no thread crash and counts none: the threads it ends are not lost', async () => {
    const logged = []
    const logger = { debug () {}, info () {}, warn () {}, error: (fields, message) => logged.push(message) }
    const p = await h.peer({ handlers: WORK, threads: 2, logger })
    const c = h.client({ seeds: [p.endpoint] })
    expect((await c.request('spin', { n: 1000 })).x).to.be.a('number')
    await p.stop()
    expect(logged).to.deep.equal([])
    expect(p.stats().threads).to.include({ crashed: 0, replaced: 0 })
  })

  it('a handler still running at its deadline is abandoned and its thread recycled', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    await rejectsWith(c.request('busyFor', { ms: 5000 }, { timeout: 300, idempotent: false }), 'ERR_ZEROMESH_TIMEOUT')
    await eventually(() => expect(p.stats().threads.abandoned).to.equal(1))
    expect(await c.request('busyFor', { ms: 1 }, { timeout: 3000 })).to.be.a('number') // a fresh thread
  })

  // Seen in CI on Node 24 beside other work: a Nest handler ended its Observable when its
  // signal aborted at the deadline, but its thread's answer reached the main thread after the
  // pool's check, 5 ms past the deadline: the thread was terminated, and a Nest application
  // bootstrapped again in its place. A handler that honours its signal has a grace to end.
  it('a handler that honours ctx.signal and ends within the grace after its deadline keeps its thread', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    const before = await c.request('whereAmI', {})
    await rejectsWith(c.request('cleansUpOnAbort', { cleanupMs: 20 }, { timeout: 200, idempotent: false }), 'ERR_ZEROMESH_TIMEOUT')
    await eventually(() => expect(p.stats().inflight).to.equal(0))
    expect(p.stats().threads).to.include({ abandoned: 0, replaced: 0 })
    expect((await c.request('whereAmI', {})).threadId).to.equal(before.threadId)
  })

  // Seen in the failover demo: a peer thawed after 4 s (SIGSTOP) found the request its thread
  // ran past its deadline and recycled the thread, though the thread had been stopped too and
  // needed a millisecond more; the new thread took ~100 ms to start, and clients ejected the
  // peer for the slow answers meanwhile. A stall of the whole process is seen as the deadline
  // timer firing late: the thread gets the time the process lost before it is abandoned.
  it('after the whole process stalled, a handler past its deadline gets the time lost before it is abandoned', async () => {
    let stalled = 0 // ms this process "was stopped": its clock jumps, its timers fire late
    const clock = { now: () => performance.now() + stalled, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t) }
    const p = await h.peer({ handlers: WORK, threads: 1, clock })
    const c = h.client({ seeds: [p.endpoint] })
    await c.request('busyFor', { ms: 1 })
    const slow = c.request('busyFor', { ms: 400 }, { timeout: 250, idempotent: false }).catch((err) => err.code)
    await eventually(() => expect(p.stats().threads.load).to.equal(1), { interval: 2 }) // it runs in the thread
    stalled = 2000
    expect(await slow).to.equal('ERR_ZEROMESH_TIMEOUT') // the client's own deadline
    await eventually(() => expect(p.stats().inflight).to.equal(0)) // the thread's answer came, or the pool let it go
    expect(p.stats().threads.abandoned).to.equal(0)
    expect(await c.request('busyFor', { ms: 1 }, { timeout: 3000 })).to.be.a('number')
    expect(p.stats().threads).to.include({ abandoned: 0, replaced: 0 })
  })

  it('the queue is bounded by time too (maxQueueMs): about maxQueueMs of work by the measured time per request; the rest wait in the client', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1, maxQueue: 64, maxQueueMs: 100 })
    const c = h.client({ seeds: [p.endpoint] })
    let most = 0
    const watch = setInterval(() => { most = Math.max(most, p.stats().inflight) }, 1)
    try {
      for (let i = 0; i < 3; i++) await c.request('busyFor', { ms: 20 })
      // 20 ms a request, measured: 100 ms is 5 waiting behind the one running.
      most = 0
      const answers = await Promise.all(Array.from({ length: 24 }, () => c.request('busyFor', { ms: 20 }, { timeout: 5000 })))
      expect(answers).to.have.length(24)
      expect(most).to.be.within(5, 7)
      expect(p.stats().threads.places).to.be.within(5, 7)
      expect(c.stats().waited).to.be.above(15)
    } finally {
      clearInterval(watch)
    }
    const refused = await h.peer({ handlers: { echo: (x) => x }, maxQueueMs: 50 }).then(() => null, (err) => err)
    expect(refused?.message).to.match(/threads, maxQueue, maxQueueMs and resourceLimits need handlers given as a module/)
  })

  it('under load a thread takes many short requests per hand-off, and each answer goes to its own request', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1, maxQueue: 1024 })
    const c = h.client({ seeds: [p.endpoint] })
    for (let i = 0; i < 20; i++) await c.request('spin', { n: 10 }) // the pool learns requests are short
    const ns = Array.from({ length: 600 }, (_, i) => 1 + ((i * 7919) % 500))
    const answers = await Promise.all(ns.map((n) => c.request('spin', { n })))
    answers.forEach((a, i) => expect(a.x).to.equal(spinLocally(ns[i])))
    const t = p.stats().threads
    expect(t.ran).to.be.at.least(620)
    expect(t.handoffs).to.be.below(t.ran / 4) // one at a time would be one hand-off per request
  })

  it('hand-offs grow with short requests even when the main thread is slow to take results', async () => {
    await withPool({}, async (pool) => {
      // A busy main thread: each answer is taken 10 ms after the request was handed over
      // (enough of them for the first, cold runs' time to fade from the average).
      for (let i = 0; i < 60; i++) {
        const answer = pool.run('spin', { n: 10 }, poolCtx(i))
        const until = Date.now() + 10
        while (Date.now() < until) { /* the main thread at work */ }
        await answer
      }
      // The time per request the pool measured is the thread's (microseconds), not the 10 ms
      // each answer waited for the main thread: were those counted, a hand-off would carry one.
      expect(pool.taskMs).to.be.below(1)
      const before = pool.counts.handoffs
      await Promise.all(Array.from({ length: 64 }, (_, i) => pool.run('spin', { n: 10 }, poolCtx(100 + i))))
      // So a hand-off carries several requests, about 2 ms of them by that measure
      // (HANDOFF_BUDGET_MS, at most 32), not one each. How many exactly follows the thread's
      // speed (64 in 4 hand-offs at 0.12 ms a request, in 5 at 0.13: the old bound of 4
      // failed on a loaded machine), so the bound is a share, not a count.
      expect(64 / (pool.counts.handoffs - before), `${pool.counts.handoffs - before} hand-offs for 64`).to.be.at.least(4)
    })
  })

  it('a thread that dies before it begins a batch: the others run alone on new threads, the culprit fails, nothing loops', async () => {
    // The pool itself, so that one hand-off carries [quick, quick, culprit, quick] for sure.
    await withPool({ shortRequests: true }, async (pool) => {
      const run = (args, i) => pool.run('spin', args, poolCtx(i)).then(() => 'ok', (e) => e.code)
      const answers = Promise.all([run({ n: 10 }, 1), run({ n: 10 }, 2), run({ n: 10, dieOnArrival: true }, 3), run({ n: 10 }, 4)])
      expect(await answers).to.deep.equal(['ok', 'ok', 'ERR_ZEROMESH_WORKER_EXIT', 'ok'])
      // Died twice (in the batch, then alone), and no more; the pool serves on.
      expect(pool.counts).to.include({ replaced: 2, handoffs: 5 })
      expect(await run({ n: 10 }, 5)).to.equal('ok')
    })
  })

  it('a slow request handed over with quick ones does not hold their answers', async () => {
    // The pool itself, so that one hand-off carries 8 quick requests and then a slow one.
    await withPool({ shortRequests: true }, async (pool) => {
      const t0 = Date.now()
      const at = (p) => p.then(() => Date.now() - t0)
      const quick = Array.from({ length: 8 }, (_, i) => at(pool.run('spin', { n: 10 }, poolCtx(i))))
      const slow = at(pool.run('busyFor', { ms: 600 }, poolCtx(8)))
      const [quickTook, slowTook] = [Math.max(...await Promise.all(quick)), await slow]
      expect(pool.counts.handoffs).to.equal(1) // all nine in one hand-off
      expect(slowTook).to.be.at.least(600)
      expect(quickTook).to.be.below(slowTook - 300) // their answers left before the slow one ran
    })
  })

  it('a suspect is never handed ahead to a busy thread: the request that thread runs is not killed with it', async () => {
    await withPool({ threads: 2 }, async (pool) => {
      const run = (method, args, i) => pool.run(method, args, poolCtx(i)).then(() => 'ok', (e) => e.code)
      // One thread takes the long one, the other the culprit, which ends it on arrival; the
      // culprit, now a suspect, waits for the replacement instead of riding behind the long one.
      const answers = Promise.all([run('waitFor', { ms: 400 }, 1), run('spin', { n: 10, dieOnArrival: true }, 2), run('spin', { n: 10 }, 3)])
      expect(await answers).to.deep.equal(['ok', 'ERR_ZEROMESH_WORKER_EXIT', 'ok'])
      expect(pool.counts).to.include({ replaced: 2 })
    })
  })

  it('a thread that dies in the middle of a batch fails its request; those it had not started run on its replacement', async () => {
    // The pool itself, so that one hand-off carries [quick, quick, exit, quick, quick] for sure.
    await withPool({ shortRequests: true }, async (pool) => {
      const run = (method, i) => pool.run(method, { n: 10 }, poolCtx(i)).then(() => 'ok', (e) => e.code)
      const answers = await Promise.all([run('spin', 1), run('spin', 2), run('exit', 3), run('spin', 4), run('spin', 5)])
      // Before it: answered (their results left before a method never timed there began).
      // After it: never started, so run on the new thread, in one more hand-off, or two when
      // the first two measured long (a hand-off holds about 2 ms of work by the time measured
      // per request, and a thread preempted on a busy machine measures long: 3 in a full run).
      expect(answers).to.deep.equal(['ok', 'ok', 'ERR_ZEROMESH_WORKER_EXIT', 'ok', 'ok'])
      expect(pool.counts).to.include({ crashed: 1, replaced: 1 })
      expect(pool.counts.handoffs).to.be.within(2, 3)
    })
  })

  // 3 s is 12 probe periods: a probe of the peer that failed would show as a suspicion at once
  // (a change), long before the suspicion's timeout could make it a death.
  it('with every thread saturated for 3 s, an observer sees no membership change of the peer', async () => {
    const a = await h.peer({ handlers: WORK, threads: 2 })
    const b = await h.peer({ seeds: [a.endpoint] })
    await eventually(() => expect(b.members().filter((m) => m.state === 'alive')).to.have.length(2))
    const changes = []
    b.on('member', (m) => changes.push(`${m.endpoint} ${m.state}`))
    const c = h.client({ seeds: [a.endpoint], discover: false })
    const end = Date.now() + 3000
    let done = 0
    const delay = monitorEventLoopDelay({ resolution: 10 }) // this process: peers' main threads and the client
    delay.enable()
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (Date.now() < end) { await c.request('busyFor', { ms: 200 }, { timeout: 5000 }); done++ }
    }))
    delay.disable()
    figure(`main-thread event-loop delay while both threads were busy: p50 ${(delay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`)
    expect(done).to.be.at.least(20) // ~2 threads x 3 s / 200 ms = 30
    expect(changes).to.deep.equal([])
    expect(b.members().find((m) => m.endpoint === a.endpoint).state).to.equal('alive')
  })

  it('refuses threads without a handler module, and a module that does not load', async () => {
    const { Peer } = await import('../../index.js')
    expect(() => new Peer({ handlers: { a: () => 1 }, threads: 2 })).to.throw().with.property('code', 'ERR_ZEROMESH_INVALID_ARGUMENT')
    const bad = new Peer({ handlers: 'data:text/javascript,throw new Error("boom")', threads: 1 })
    const err = await rejectsWith(bad.start(), 'ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.match(/could not be loaded/)
  })

  it('in a thread, ctx.deadline is on the clock ctx.remaining() reads (performance.now(), as on the main thread)', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    const t = await c.request('timeLeft', null, { timeout: 3000 })
    expect(t.threadId).to.be.above(0)
    expect(t.remaining).to.be.within(1, 3000)
    expect(Math.abs(t.untilDeadline - t.remaining)).to.be.below(50)
  })

  it('a stream handed to a thread busy with a request keeps its deadline: the time it waited for the thread counts', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1, maxQueue: 8 })
    const c = h.client({ seeds: [p.endpoint] })
    await c.request('whereAmI') // the thread is up and known
    const busy = c.request('busyFor', { ms: 800 }, { timeout: 5000 })
    await eventually(() => expect(p.stats().threads.load).to.equal(1))
    const items = []
    for await (const item of c.stream('timeLeftStream', null, { timeout: 3000 })) items.push(item)
    await busy
    expect(items).to.have.length(1)
    expect(items[0].remaining).to.be.below(3000 - 500) // it waited about 800 ms behind busyFor
    expect(Math.abs(items[0].untilDeadline - items[0].remaining)).to.be.below(50)
  })

  it('a busy thread is handed its next request ahead: it begins it without waiting for the main thread', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1, maxQueue: 8 })
    const c = h.client({ seeds: [p.endpoint] })
    await c.request('whereAmI')
    const answers = [1, 2, 3].map(() => c.request('stamped', { ms: 60 }, { timeout: 10000 }))
    await eventually(() => expect(p.stats().threads.load).to.equal(3))
    expect(p.stats().threads.handoffs).to.equal(3) // whereAmI's, the first stamped's, and the second's, ahead, while the first runs
    const end = performance.now() + 300 // this process's main thread (the peer's) is busy for 300 ms
    while (performance.now() < end) { /* blocks the main thread */ }
    const [a, b] = await Promise.all(answers)
    expect(b.threadId).to.equal(a.threadId)
    expect(b.start - a.end).to.be.below(40) // handed ahead; without it, the main thread's 300 ms first
  })

  it('a thread that dies holding requests handed ahead: the one it ran fails, those it never began run on its replacement', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1, maxQueue: 8 })
    const c = h.client({ seeds: [p.endpoint] })
    const first = (await c.request('whereAmI')).threadId
    const busy = c.request('busyFor', { ms: 150 }, { idempotent: false })
    await eventually(() => expect(p.stats().threads.load).to.equal(1))
    const exit = c.request('exit', null, { idempotent: false }).catch((e) => e)
    const after = [1, 2].map(() => c.request('whereAmI', null, { idempotent: false }))
    await eventually(() => expect(p.stats().threads.load).to.equal(4))
    expect(await busy).to.equal(first)
    const err = await exit
    expect(err.remoteCode).to.equal('ERR_ZEROMESH_WORKER_EXIT')
    const where = await Promise.all(after)
    expect(where.map((w) => w.threadId)).to.not.include(first)
    expect(p.stats().threads).to.include({ crashed: 1, replaced: 1 })
  })

  it('a request the client cancels aborts ctx.signal in its thread, long before its deadline', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    const bc = new BroadcastChannel('zeromesh-test')
    const heard = new Promise((resolve) => { bc.onmessage = (e) => resolve(e.data) })
    const ac = new AbortController()
    const pending = c.request('untilAborted', { key: 'k1' }, { timeout: 20000, signal: ac.signal })
    await eventually(() => expect(p.stats().threads.load).to.equal(1))
    const t0 = Date.now()
    ac.abort()
    await rejectsWith(pending, 'ERR_ZEROMESH_ABORTED')
    const got = await Promise.race([heard, new Promise((resolve) => setTimeout(() => resolve(null), 3000))])
    bc.close()
    expect(got).to.deep.equal({ key: 'k1', reason: 'cancelled by the client' })
    expect(Date.now() - t0).to.be.below(3000)
    expect(p.stats().threads.cancelled).to.equal(1)
  })

  it('a thread that cannot be started again is retried with backoff; the pool recovers when it can', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    process.env.ZEROMESH_TEST_FAIL_LOAD = '1'
    try {
      await rejectsWith(c.request('exit', null, { idempotent: false }), 'ERR_ZEROMESH_REMOTE')
      await eventually(() => expect(p.stats().threads.startFailures).to.be.at.least(2))
      expect(p.stats().threads.size).to.equal(0)
    } finally {
      delete process.env.ZEROMESH_TEST_FAIL_LOAD
    }
    await eventually(() => expect(p.stats().threads.size).to.equal(1))
    expect(p.state).to.equal('running')
    expect((await c.request('whereAmI')).threadId).to.be.above(0)
  })

  it('a pool that cannot keep one thread makes the peer say it is unhealthy and leave the cluster', async () => {
    const other = await h.peer({ handlers: { echo: (x) => x } })
    const p = await h.peer({ handlers: WORK, threads: 1, seeds: [other.endpoint] })
    await eventually(() => expect(other.members().find((m) => m.endpoint === p.endpoint)?.state).to.equal('alive'))
    const c = h.client({ seeds: [p.endpoint] })
    const unhealthy = new Promise((resolve) => p.once('unhealthy', resolve))
    process.env.ZEROMESH_TEST_FAIL_LOAD = '1'
    try {
      await rejectsWith(c.request('exit', null, { idempotent: false }), 'ERR_ZEROMESH_REMOTE')
      const err = await unhealthy
      expect(err.message).to.match(/no handler thread could be started 5 times in a row/)
    } finally {
      delete process.env.ZEROMESH_TEST_FAIL_LOAD
    }
    await eventually(() => expect(p.state).to.equal('stopped'))
    await eventually(() => expect(other.members().find((m) => m.endpoint === p.endpoint)?.state).to.equal('left'))
  })
})

// What fixtures/work.js's spin returns as x for n.
function spinLocally (n) {
  let x = 0
  for (let i = 0; i < n; i++) x = (x + i * 2654435761) % 4294967296
  return x
}

/**
 * Runs `fn` with a started pool of one thread of the test module, and stops it after. With
 * `shortRequests` the pool takes its requests to be short from the start (hand-offs of up
 * to 32), as it would after timing some.
 */
async function withPool ({ shortRequests = false, threads = 1 }, fn) {
  const pool = new WorkerPool({ modules: [WORK.href], threads })
  try {
    await pool.start()
    if (shortRequests) pool.taskMs = 0.01
    await fn(pool)
  } finally {
    await pool.stop()
  }
}

/** The request context a Dispatcher hands the pool, for a test that drives the pool itself. */
function poolCtx (requestId) {
  return new RequestContext({ id: requestId, method: null, timeoutMs: 0 }, 'tcp://127.0.0.1:1', systemClock, 0)
}
