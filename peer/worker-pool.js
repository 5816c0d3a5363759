// A pool of worker threads running a handler module, so CPU-bound requests use every core
// while the main thread keeps doing I/O and gossip. Each thread runs one request at a time;
// the rest wait in a bounded queue (the dispatcher answers BUSY beyond it), taken in turn
// across the flows that share the peer (fair-queue.js). Under load a
// thread is handed several short requests in one message, as many as take about
// HANDOFF_BUDGET_MS by the pool's measured time per request (at most MAX_HANDOFF), and
// their results come back together (worker.js): a hand-off costs the main thread and the
// thread a message each way, which for small requests is most of the work. Long requests go
// one per hand-off, as before. When every thread is busy and short requests wait for each of
// them, each thread is handed its next ones ahead, to begin the moment it finishes without a
// round trip through the main thread. A request whose deadline passes while queued is dropped
// unrun; one still running at its deadline is abandoned: its thread is terminated and
// replaced. A request the client cancels aborts `ctx.signal` in its thread. A thread that
// exits or crashes fails its request with a coded error and is replaced; what else it was
// handed and never started goes back to the front of the queue (the thread marks each
// request it starts in shared memory, so the pool knows). A replacement that fails to start
// is tried again with backoff, and when the pool has had no thread for a while, `onEmpty`
// tells the peer, which leaves the cluster rather than gossip alive and answer busy for
// ever. The peer process never dies from a handler.
import { ZeromeshError, ClosedError, DrainingError, RemoteCode } from '../protocol/errors.js'
import { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { systemClock, timerDelay } from '../runtime/clock.js'
import { FairQueue } from './fair-queue.js'
import { Packed } from '../protocol/frames.js'
import { Values } from '../runtime/values.js'
import { ThreadStream } from './thread-stream.js'
import { errorFromValue } from '../protocol/issues.js'
import { PoolThread } from './pool-thread.js'
import { Task } from './pool-task.js'
import { ThreadsRan } from './each-thread.js'

const RESPAWN_MIN_MS = 100 //  first pause before starting a failed replacement again...
const RESPAWN_MAX_MS = 5000 // ...doubling up to this
const EMPTY_ATTEMPTS = 5 //    failed starts in a row with no thread left: the pool is dead
const MAX_HANDOFF = 32 //      requests handed to a thread in one message, at most...
const HANDOFF_BUDGET_MS = 2 // ...and about this much work by the measured time per request
const AHEAD_TASK_MS = 10 //    a busy thread is handed its next requests ahead only when they take less than this
const TASK_MS_WEIGHT = 0.2 //  of a new measurement in the time per request (a moving average)
const ABANDON_GRACE_MS = 50 //  a handler still running this long past its deadline is abandoned (one that honours ctx.signal has ended by then)
const NOT_BEGUN_RECHECK_MS = 5 // a thread past a deadline that has not begun its batch is looked at again after this
const STALL_MS = 50 //          a deadline timer this late means the whole process stalled (SIGSTOP, a paused VM)...
const STALL_GRACE_MAX_MS = 5000 // ...and its threads get the time lost, up to this, before anything is abandoned

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url))

/** How a task failed outside its handler: a ZeromeshError with the code its answer carries. */
const failed = (message, code, issues) => errorFromValue(issues === undefined ? [message, code] : [message, code, issues], ZeromeshError) // a handler's error with no code keeps none, as on the main thread

export class WorkerPool {
  /**
   * @param {object} o
   * @param {string[]} o.modules       URLs (file:, data:) of the handler modules
   * @param {number} o.threads
   * @param {object} [o.resourceLimits] per thread (worker_threads resourceLimits)
   * @param {{ setTimeout: Function, clearTimeout: Function }} [o.clock]
   * @param {(err: Error) => void} [o.onEmpty]  no thread left, and none could be started
   * @param {{ publish: Function, broadcast: Function }} [o.publisher]  publishes what a thread's handler publishes (ctx.publish)
   */
  constructor (o) {
    this.o = o
    this.clock = o.clock ?? systemClock
    this.failedStarts = 0 // replacements that failed to start, in a row
    this.respawnTimer = null
    this.threads = []
    this.idle = []
    this.queue = new FairQueue() // tasks waiting for a thread, taken in turn across flows
    this.nextId = 1
    this.methods = []
    this.methodIndex = new Map() // method -> its place in `methods`, as every thread lists them
    this.closed = false
    this.pumpQueued = false
    this.taskMs = null // measured time per request in a thread (null: none measured yet)
    this.counts = { ran: 0, expired: 0, abandoned: 0, crashed: 0, replaced: 0, cancelled: 0, startFailures: 0, handoffs: 0, busyMs: 0 }
  }

  /** Starts every thread; resolves with the method names once they are ready. */
  async start () {
    const ready = []
    for (let i = 0; i < this.o.threads; i++) ready.push(this.spawn())
    const lists = await Promise.all(ready)
    this.methods = lists[0].methods
    this.described = lists[0].described // contract methods' descriptions (implement())
    this.streaming = new Set(lists[0].streaming) // the methods served as streams (runtime/stream-marker.js)
    this.withMiddleware = lists[0].withMiddleware // the modules that export middleware, for the main thread to load
    this.eachThread = new Set(lists[0].eachThread ?? []) // subscriptions every thread runs (each-thread.js)
    this.methodIndex = new Map(this.methods.map((m, i) => [m, i]))
    return this.methods
  }

  spawn () {
    const progress = new SharedArrayBuffer(4)
    const worker = new Worker(WORKER, {
      workerData: { modules: this.o.modules, progress },
      resourceLimits: this.o.resourceLimits,
    })
    const t = new PoolThread(worker, progress)
    this.threads.push(t)
    return new Promise((resolve, reject) => {
      worker.on('message', (m) => {
        if (m.type === 'ready') {
          t.ready = true
          this.failedStarts = 0
          this.idle.push(t)
          this.pump()
          resolve(m)
        } else if (m.type === 'done') {
          this.results(t, m.results, m.bytes, m.ranMs)
        } else if (m.type === 'stream-item') {
          t.streams.get(m.sid)?.item(Buffer.from(m.frame, m.at ?? 0), m.bulk === undefined ? undefined : m.bulk.map((b) => Buffer.from(b)))
        } else if (m.type === 'stream-input-read') {
          t.streams.get(m.sid)?.inputRead(m.items)
        } else if (m.type === 'stream-input-stop') {
          t.streams.get(m.sid)?.inputStop()
        } else if (m.type === 'stream-end') {
          const s = t.streams.get(m.sid)
          if (s !== undefined) { t.streams.delete(m.sid); s.ended(m.error, m.count, m.expired === true) }
        } else if (m.type === 'publish') {
          this.publishFor(t, m)
        }
      })
      // A thread that fails before it is ready was never in service: it is dropped, and the
      // caller (start, or respawn's backoff) decides what next.
      worker.on('error', (err) => {
        if (!t.ready) { this.drop(t); reject(err); return }
        this.lost(t, `handler thread crashed: ${err?.message ?? err}`)
      })
      worker.on('exit', (code) => {
        if (!t.ready) { this.drop(t); reject(new Error(`handler thread exited (${code}) while loading ${this.o.modules.join(', ')}`)); return }
        this.lost(t, `handler thread exited with code ${code}`)
      })
    })
  }

  /**
   * A thread's handler publishes or broadcasts (`m.how`) an event: the peer does it, and the
   * thread hears how it went (an error as its plain fields, with each group's outcome).
   */
  publishFor (t, m) {
    const publisher = this.o.publisher
    const done = publisher === undefined ? Promise.reject(new Error('this pool publishes nothing')) : publisher[m.how](m.event, m.payload, m.options, m.trace)
    // Errors go as their plain fields (a structured clone keeps no `code`), each group's or peer's too.
    const plain = (e) => ({ message: e?.message ?? String(e), code: e?.code ?? null, remoteCode: e?.remoteCode ?? null })
    const plainFailed = (failed) => failed?.map((f) => ({ ...f, error: plain(f.error) }))
    done.then(
      (value) => { if (this.threads.includes(t)) t.worker.postMessage({ type: 'published', ref: m.ref, value: value.failed === undefined ? value : { ...value, failed: plainFailed(value.failed) } }) },
      (err) => {
        if (!this.threads.includes(t)) return
        t.worker.postMessage({ type: 'published', ref: m.ref, error: { ...plain(err), delivered: err?.delivered, failed: plainFailed(err?.failed) } })
      },
    )
  }

  /**
   * The places (requests running or queued) the peer may hold for these threads: one
   * running on each, and queued behind them at most `maxQueue`, or fewer when the measured
   * time per request says they would be more than `maxQueueMs` of work (each thread keeps at
   * least one waiting). What a crashed peer takes with it, and what a new peer could have run
   * sooner, is then bounded by time, not count; short requests keep the whole queue.
   */
  places (maxQueue, maxQueueMs) {
    const threads = this.o.threads
    // Before any request is measured, the whole queue. Not one a thread until then: a client
    // refused busy refills the places it holds and looks for more only once a second
    // (capacity.js), and short requests held at two a thread ran at 0.37x the req/s (100 in
    // flight, spin n=2000; measured before that probe for more existed).
    if (this.taskMs === null || this.taskMs <= 0) return threads + maxQueue
    return threads + Math.min(maxQueue, Math.max(threads, Math.floor((maxQueueMs * threads) / this.taskMs)))
  }

  /** Requests running or waiting, for the load a peer reports. */
  get load () {
    let n = this.queue.length
    for (const t of this.threads) n += t.tasks.length - t.done
    return n
  }

  /**
   * Runs `method(args)` on a thread. `ctx` is the dispatcher's request context: its deadline
   * bounds the wait in the queue and the run.
   */
  run (method, args, ctx) {
    if (this.closed) return Promise.reject(failed('peer is stopping', ClosedError.code))
    return new Promise((resolve, reject) => {
      this.queue.push(new Task(this.counts, this.nextId++, method, args, ctx, resolve, reject))
      // Handed off once the code that queued it is done (a frame's requests come in one go),
      // so they leave together instead of the first alone to the first idle thread.
      if (!this.pumpQueued && (this.idle.length > 0 || this.queue.length >= this.threads.length)) {
        this.pumpQueued = true
        queueMicrotask(() => { this.pumpQueued = false; this.pump() })
      }
    })
  }

  /**
   * Runs `method(args)` on every thread at once (a subscription with eachThread), past the
   * queue: each thread takes it after what it holds. Resolves with ThreadsRan (how many ran it)
   * once every thread finished it; rejects with the first failure.
   */
  runOnEach (method, args, ctx) {
    if (this.closed) return Promise.reject(failed('peer is stopping', ClosedError.code))
    const tasks = []
    const done = this.threads.map((t) => new Promise((resolve, reject) => {
      const task = new Task(this.counts, this.nextId++, method, args, ctx, resolve, reject)
      tasks.push(task)
      this.hand(t, [task])
    }))
    ctx.runner = { cancel: () => { for (const task of tasks) task.cancel() } } // a cancel reaches every thread
    return Promise.all(done).then(() => new ThreadsRan(done.length))
  }

  /**
   * Runs the stream `method(args)` on a thread: its generator runs on that thread's event
   * loop, beside the requests the thread is handed (a stream waiting for credit holds no
   * thread), on the thread with the fewest streams. `o` is the stream's wire id, first credit,
   * frame limits, `send(frame)`, `end(err, count)` and `room()` (whether the peer takes more
   * of its frames now). Returns the producer's handle: grant(items, bytes), wake(), cancel(),
   * blocked, count.
   */
  stream (method, args, ctx, o) {
    const ready = this.threads.filter((t) => t.ready)
    if (this.closed || ready.length === 0) {
      queueMicrotask(() => o.end(failed('peer is stopping', DrainingError.code), 0))
      return new ThreadStream(null, 0, o)
    }
    let t = ready[0]
    for (const x of ready) if (x.streams.size < t.streams.size) t = x
    const s = new ThreadStream(t, this.nextId++, o)
    t.streams.set(s.sid, s)
    t.worker.postMessage({ type: 'stream', sid: s.sid, id: o.id, method: this.methodIndex.get(method), args, requestId: ctx.requestId, timeoutMs: ctx.timeoutMs, deadline: ctx.handoffDeadline(), endpoint: ctx.endpoint, trace: ctx.trace, headers: ctx.headers, items: s.items, bytes: s.lent, maxFrame: o.maxFrame, maxBatch: o.maxBatch, bulk: o.bulk === true, input: o.input != null })
    return s
  }

  /** Thread `t` is gone: its streams end with `message`. */
  endStreams (t, message) {
    const streams = [...t.streams.values()]
    t.streams.clear()
    for (const s of streams) s.ended([message, RemoteCode.WORKER_EXIT], s.count)
  }

  /** How many queued requests the next hand-off takes, shared fairly among `takers` threads. */
  handoffSize (takers) {
    const fair = Math.ceil(this.queue.length / takers) // leave work for the other threads
    const budget = this.taskMs === null ? 1 : Math.max(1, Math.floor(HANDOFF_BUDGET_MS / this.taskMs))
    return Math.min(MAX_HANDOFF, fair, budget)
  }

  pump () {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const batch = this.take(this.handoffSize(this.idle.length))
      if (batch.length === 0) return
      this.hand(this.idle.pop(), batch)
    }
    // Every thread busy and at least one request waiting for each: each thread gets its next
    // hand-off now, to begin the moment it finishes, instead of idling for a round trip
    // through this thread (a message each way, and whatever this thread is doing): that was
    // 6-10% of a thread's time with requests of 2 ms (bench/RESULTS.md). Not for requests of
    // AHEAD_TASK_MS or more: the round trip is then a small share of a request, and what a
    // thread holds ahead is taken from the fair order early, ahead of a flow that comes next.
    if (this.queue.length < this.threads.length || this.taskMs === null || this.taskMs >= AHEAD_TASK_MS) return
    for (const t of this.threads) {
      if (this.queue.length === 0) return
      if (!t.mayTakeAhead()) continue
      const batch = this.take(this.handoffSize(this.threads.length), true)
      if (batch.length === 0) return
      this.hand(t, batch)
    }
  }

  /**
   * Up to `size` requests from the queue, dropping those whose client gave up; a suspect
   * alone, and never `ahead` (it may end the thread, and with it the request the thread runs).
   */
  take (size, ahead = false) {
    const batch = []
    while (batch.length < size && this.queue.length > 0) {
      const task = this.queue.shift()
      if (task.ctx.remaining() <= 0 || task.ctx.cancelled) {
        // Its client gave up while it waited: never run it.
        this.counts.expired++
        this.settle(task, failed('deadline passed while queued', RemoteCode.EXPIRED), true)
        continue
      }
      // A suspect (see recycle) goes alone: if it kills its thread again, it alone fails.
      if (task.suspect && (ahead || batch.length > 0)) { this.queue.unshiftAll([task]); break }
      batch.push(task)
      if (task.suspect) break
    }
    return batch
  }

  /** Hands `batch` to thread `t`: idle, or busy (after what it holds: PoolThread.mayTakeAhead). */
  hand (t, batch) {
    const idle = t.tasks.length === 0
    const at = t.take(batch)
    this.counts.ran += batch.length
    this.counts.handoffs++
    // Each request as a tuple, its method by number (the thread's own list, from 'ready'):
    // the structured clone of a batch is most of a hand-off's cost, and keys and repeated
    // strings are most of that.
    const message = new Array(batch.length)
    for (let i = 0; i < batch.length; i++) {
      const task = batch[i]
      // A cancel from the client reaches the thread: its ctx.signal aborts there too.
      task.thread = t
      task.ctx.runner = task
      message[i] = [task.id, this.methodIndex.get(task.method) ?? task.method, task.args, task.ctx.requestId, task.ctx.timeoutMs, task.ctx.handoffDeadline(), task.ctx.trace, task.ctx.headers]
    }
    t.worker.postMessage({ type: 'run', endpoint: batch[0].ctx.endpoint, at, tasks: message })
    if (idle) this.watch(t)
  }

  /**
   * Results from thread `t`, in the order of its batch: [id, 0, offset, length] for a value
   * (MessagePack bytes in `bytes`: it resolves as Packed, copied into the reply as it is),
   * [id, 3, offset, length] for a large binary one (its bytes in `bytes`: it resolves as a
   * Buffer over them, for a bulk frame), [id, 1, message, code] for an error, [id, 2, message,
   * code] for a request not run.
   */
  results (t, results, bytes, ranMs) {
    if (t.tasks.length === 0) return // from a thread already let go (abandoned, or the pool stopped)
    // Time in the thread, not since the hand-off: a busy main thread must not make short
    // requests look long, or hand-offs would stay one request each when they matter most.
    this.counts.busyMs += ranMs
    if (results.length > 0) {
      const perTask = ranMs / results.length
      this.taskMs = this.taskMs === null ? perTask : this.taskMs + TASK_MS_WEIGHT * (perTask - this.taskMs)
    }
    for (const [id, kind, value, code, issues] of results) {
      const task = t.tasks[t.done]
      if (task === undefined || task.id !== id) continue // abandoned or replaced meanwhile
      t.done++
      if (kind === 0) this.settle(task, null, false, new Packed(Buffer.from(bytes, value, code)))
      else if (kind === 3) this.settle(task, null, false, Buffer.from(bytes, value, code))
      else if (kind === 4) this.settle(task, null, false, new Values(new Packed(Buffer.from(bytes, value, code))))
      else if (kind === 1) this.settle(task, failed(value, code, issues), false)
      else { this.counts.expired++; this.settle(task, failed(value, code), true) }
    }
    if (!t.letGoAnswered()) {
      this.watch(t)
      this.pump() // its next hand-off, if it began the one it was handed ahead
      return
    }
    this.clock.clearTimeout(t.timer)
    t.timer = null
    this.idle.push(t)
    this.pump()
  }

  /** Settles a task once; `unrun` tells its client nothing (it gave up), as the dispatcher does for a cancelled request. */
  settle (task, err, unrun, value) {
    if (task.settled) return
    task.settled = true
    task.thread = null
    task.ctx.runner = null
    if (unrun) task.ctx.cancel()
    if (err === null) task.resolve(value)
    else task.reject(err)
  }

  /** Arms thread `t`'s timer for the deadline of the first of its requests not answered yet. */
  watch (t) {
    this.clock.clearTimeout(t.timer)
    t.timer = null
    const head = t.tasks[t.done]
    if (head === undefined) return
    const remaining = head.ctx.remaining()
    if (remaining === Infinity) return
    this.check(t, Math.ceil(remaining) + ABANDON_GRACE_MS)
  }

  /** Looks at thread `t` again (overdue) in `ms`. */
  check (t, ms) {
    const due = this.clock.now() + ms
    t.timer = this.clock.setTimeout(() => { t.timer = null; this.overdue(t, due) }, timerDelay(ms))
  }

  /**
   * A request of thread `t` is past its deadline with no answer. If the request the thread
   * runs now is ABANDON_GRACE_MS past its own deadline, it is abandoned: its thread is
   * recycled (a handler that honours ctx.signal has ended by then, its answer on the way). Otherwise
   * the late one has finished (its result is on the way) or not begun (the thread will skip
   * it), and the timer watches the one that runs. A timer that fired more than STALL_MS after
   * `due` says the whole process was stalled, its threads with it: they get the time lost
   * (up to STALL_GRACE_MAX_MS) before anything is abandoned.
   */
  overdue (t, due) {
    if (t.done >= t.tasks.length) return
    const late = this.clock.now() - due
    if (late > STALL_MS) return this.check(t, Math.min(STALL_GRACE_MAX_MS, Math.ceil(late)))
    const at = t.at
    if (at < t.done) return this.check(t, NOT_BEGUN_RECHECK_MS) // the thread has not begun its batch yet
    const running = t.tasks[at]
    const graceLeft = running.ctx.deadline + ABANDON_GRACE_MS - this.clock.now() // the pool and its requests read one clock (the peer's)
    if (graceLeft > 0) return this.check(t, Math.ceil(graceLeft))
    this.counts.abandoned++
    this.recycle(t, at, (task) => {
      this.settle(task, failed('deadline passed while running', RemoteCode.EXPIRED), true) // the client has its own timeout error: no reply
    })
    t.worker.terminate().catch(() => {})
    this.pump()
  }

  /**
   * Thread `t` is going (abandoned, crashed, exited): each request it was handed and did not
   * answer is settled by where it stood. Before the one it ran (`at`): it ran, but its reply
   * went with the thread. The one it ran: `onRunning`. After it: never started, back to the
   * front of the queue for another thread. Then a new thread takes its place.
   * A thread that ended before it began any of them (`at` before the first) ran nothing, and
   * which of them ended it is not known: each goes back as a suspect, to be handed over
   * alone, and a suspect whose thread ends again before beginning it fails. So a request
   * that kills threads on arrival fails on its own, and nothing loops.
   */
  recycle (t, at, onRunning) {
    const tasks = t.tasks
    const from = t.done
    t.clear()
    this.clock.clearTimeout(t.timer)
    t.timer = null
    const begun = at >= from
    const again = []
    for (let i = from; i < tasks.length; i++) {
      const task = tasks[i]
      if (i < at) this.settle(task, failed('handler thread ended before this request\'s reply was passed back', RemoteCode.WORKER_EXIT), false)
      else if (i === at) onRunning(task)
      else if (task.settled) continue
      else if (!begun && task.suspect) {
        this.counts.crashed++
        this.settle(task, failed('handler thread ended twice as it was handed this request', RemoteCode.WORKER_EXIT), false)
      } else {
        if (!begun) task.suspect = true
        task.thread = null
        task.ctx.runner = null
        this.counts.ran--
        again.push(task)
      }
    }
    this.queue.unshiftAll(again)
    this.replace(t)
  }

  lost (t, message) {
    // A stopping pool ends its threads itself (stop: terminate), and has answered what they held.
    if (this.closed || !this.threads.includes(t)) return
    this.o.onCrash?.(message) // said once, with its error: the peer logs it (handlers.js)
    // The request it ran, or (before it began the next one) the last one it answered.
    const progress = t.at
    const at = progress >= t.done ? progress : t.done - 1
    this.recycle(t, at, (task) => {
      this.counts.crashed++
      this.settle(task, failed(message, RemoteCode.WORKER_EXIT), false)
    })
    this.pump()
  }

  drop (t) {
    this.threads = this.threads.filter((x) => x !== t)
    this.idle = this.idle.filter((x) => x !== t)
  }

  /** Takes `t` out of the pool and starts a new thread in its place. */
  replace (t) {
    this.drop(t)
    this.endStreams(t, 'handler thread ended while the stream was open')
    if (this.closed) return
    this.counts.replaced++
    this.respawn()
  }

  /** Starts a replacement thread; one that fails to start is tried again, with backoff. */
  respawn () {
    this.spawn().catch((err) => {
      this.counts.startFailures++
      this.failedStarts++
      if (this.closed) return
      if (this.threads.length === 0 && this.failedStarts >= EMPTY_ATTEMPTS) {
        this.o.onEmpty?.(new Error(`no handler thread could be started ${this.failedStarts} times in a row: ${err?.message ?? err}`))
      }
      const pause = Math.min(RESPAWN_MAX_MS, RESPAWN_MIN_MS * 2 ** (this.failedStarts - 1))
      this.respawnTimer = this.clock.setTimeout(() => { this.respawnTimer = null; if (!this.closed) this.respawn() }, pause)
    })
  }

  /** Each thread runs a full collection when it is next free (peer/collect.js). */
  collect () {
    for (const t of this.threads) t.worker.postMessage({ type: 'collect' })
  }

  async stop () {
    this.closed = true
    if (this.respawnTimer !== null) this.clock.clearTimeout(this.respawnTimer)
    // Never started: the client may send it elsewhere (DRAINING, not an error from the handler).
    for (const task of this.queue.drain()) this.settle(task, failed('peer is stopping', DrainingError.code), false)
    // Handed to a thread and not answered when the drain ended: answered now, before the
    // threads go (their exit events may come after this pool has let go of them, and nobody
    // would answer). Those the thread had not started are DRAINING too.
    for (const t of this.threads) {
      const at = t.at
      for (let i = t.done; i < t.tasks.length; i++) {
        if (i > at) this.counts.ran-- // handed (ahead, or in its batch) and never begun
        const err = i > at
          ? failed('peer is stopping', DrainingError.code)
          : failed('peer stopped while the handler ran', RemoteCode.WORKER_EXIT)
        this.settle(t.tasks[i], err, false)
      }
      t.clear()
      this.clock.clearTimeout(t.timer)
      t.timer = null
    }
    for (const t of this.threads) this.endStreams(t, 'peer stopped while the stream was open')
    await Promise.all(this.threads.map((t) => t.worker.terminate().catch(() => {})))
    this.threads = []
    this.idle = []
  }
}
