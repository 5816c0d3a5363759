// A pool of worker threads running a handler module, so CPU-bound requests use every core
// while the main thread keeps doing I/O and gossip. One request per thread at a time; the
// rest wait in a bounded queue (the dispatcher answers BUSY beyond it). A request whose
// deadline passes while queued is dropped unrun; one still running at its deadline is
// abandoned: its thread is terminated and replaced. A request the client cancels aborts
// `ctx.signal` in its thread. A thread that exits or crashes fails its request with a coded
// error and is replaced; a replacement that fails to start is tried again with backoff, and
// when the pool has had no thread for a while, `onEmpty` tells the peer, which leaves the
// cluster rather than gossip alive and answer busy for ever. The peer process never dies
// from a handler.
import { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { systemClock, timerDelay } from '../protocol/clock.js'

const RESPAWN_MIN_MS = 100 //  first pause before starting a failed replacement again...
const RESPAWN_MAX_MS = 5000 // ...doubling up to this
const EMPTY_ATTEMPTS = 5 //    failed starts in a row with no thread left: the pool is dead

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url))

export class WorkerError extends Error {
  constructor (message, code) {
    super(message)
    this.code = code
  }
}

export class WorkerPool {
  /**
   * @param {object} o
   * @param {string} o.module          URL (file:, data:) of the handler module
   * @param {number} o.threads
   * @param {object} [o.resourceLimits] per thread (worker_threads resourceLimits)
   * @param {{ setTimeout: Function, clearTimeout: Function }} [o.clock]
   * @param {(err: Error) => void} [o.onEmpty]  no thread left, and none could be started
   */
  constructor (o) {
    this.o = o
    this.clock = o.clock ?? systemClock
    this.failedStarts = 0 // replacements that failed to start, in a row
    this.respawnTimer = null
    this.threads = []
    this.idle = []
    this.queue = [] // tasks waiting for a thread
    this.nextId = 1
    this.methods = []
    this.closed = false
    this.counts = { ran: 0, expired: 0, abandoned: 0, crashed: 0, replaced: 0, cancelled: 0, startFailures: 0 }
  }

  /** Starts every thread; resolves with the method names once they are ready. */
  async start () {
    const ready = []
    for (let i = 0; i < this.o.threads; i++) ready.push(this.spawn())
    const lists = await Promise.all(ready)
    this.methods = lists[0]
    return this.methods
  }

  spawn () {
    const worker = new Worker(WORKER, {
      workerData: { module: this.o.module },
      resourceLimits: this.o.resourceLimits,
    })
    const t = { worker, task: null, timer: null, ready: false }
    this.threads.push(t)
    return new Promise((resolve, reject) => {
      worker.on('message', (m) => {
        if (m.type === 'ready') {
          t.ready = true
          this.failedStarts = 0
          this.idle.push(t)
          this.pump()
          resolve(m.methods)
        } else if (m.type === 'done') {
          this.finish(t, m.ok ? { value: m.value } : { error: new WorkerError(m.message, m.code) })
        }
      })
      // A thread that fails before it is ready was never in service: it is dropped, and the
      // caller (start, or respawn's backoff) decides what next.
      worker.on('error', (err) => {
        if (!t.ready) { this.drop(t); reject(err); return }
        this.lost(t, `handler thread crashed: ${err?.message ?? err}`)
      })
      worker.on('exit', (code) => {
        if (!t.ready) { this.drop(t); reject(new Error(`handler thread exited (${code}) while loading ${this.o.module}`)); return }
        this.lost(t, `handler thread exited with code ${code}`)
      })
    })
  }

  /** Requests running or waiting, for the load a peer reports. */
  get load () {
    return this.queue.length + this.threads.filter((t) => t.task !== null).length
  }

  /**
   * Runs `method(args)` on a thread. `ctx` is the dispatcher's request context: its deadline
   * bounds the wait in the queue and the run.
   */
  run (method, args, ctx) {
    if (this.closed) return Promise.reject(new WorkerError('peer is stopping', 'ERR_ZEROMESH_CLOSED'))
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, method, args, ctx, resolve, reject })
      this.pump()
    })
  }

  pump () {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const task = this.queue.shift()
      const remaining = task.ctx.remaining()
      if (remaining <= 0 || task.ctx.cancelled) {
        // Its client gave up while it waited: never run it.
        this.counts.expired++
        task.ctx.cancel()
        task.reject(new WorkerError('deadline passed while queued', 'ERR_ZEROMESH_EXPIRED'))
        continue
      }
      const t = this.idle.pop()
      t.task = task
      this.counts.ran++
      // A cancel from the client reaches the thread: its ctx.signal aborts there too.
      task.ctx.onCancel = () => { if (t.task === task) { this.counts.cancelled++; t.worker.postMessage({ type: 'cancel', id: task.id }) } }
      t.worker.postMessage({
        type: 'run',
        id: task.id,
        method: task.method,
        args: task.args,
        requestId: task.ctx.requestId,
        endpoint: task.ctx.endpoint,
        timeoutMs: task.ctx.timeoutMs,
        remainingMs: remaining === Infinity ? 0 : Math.ceil(remaining),
      })
      if (remaining !== Infinity) {
        // Still running at the deadline: abandon it, recycle the thread.
        t.timer = this.clock.setTimeout(() => this.abandon(t), timerDelay(Math.ceil(remaining) + 5))
      }
    }
  }

  finish (t, outcome) {
    const task = t.task
    if (task === null) return
    this.clock.clearTimeout(t.timer)
    t.timer = null
    t.task = null
    task.ctx.onCancel = null
    this.idle.push(t)
    if ('error' in outcome) task.reject(outcome.error)
    else task.resolve(outcome.value)
    this.pump()
  }

  abandon (t) {
    const task = t.task
    if (task === null) return
    this.counts.abandoned++
    task.ctx.cancel() // the client has its own timeout error: no reply
    t.task = null
    task.reject(new WorkerError('deadline passed while running', 'ERR_ZEROMESH_EXPIRED'))
    this.replace(t)
    t.worker.terminate().catch(() => {})
  }

  lost (t, message) {
    if (!this.threads.includes(t)) return
    const task = t.task
    t.task = null
    this.clock.clearTimeout(t.timer)
    if (task !== null) {
      this.counts.crashed++
      task.reject(new WorkerError(message, 'ERR_ZEROMESH_WORKER_EXIT'))
    }
    this.replace(t)
  }

  drop (t) {
    this.threads = this.threads.filter((x) => x !== t)
    this.idle = this.idle.filter((x) => x !== t)
  }

  /** Takes `t` out of the pool and starts a new thread in its place. */
  replace (t) {
    this.drop(t)
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

  async stop () {
    this.closed = true
    if (this.respawnTimer !== null) this.clock.clearTimeout(this.respawnTimer)
    // Never started: the client may send it elsewhere (DRAINING, not an error from the handler).
    for (const task of this.queue.splice(0)) task.reject(new WorkerError('peer is stopping', 'ERR_ZEROMESH_DRAINING'))
    // Still running when the drain ended: answered now, before the threads go (their exit
    // events may come after this pool has let go of them, and nobody would answer).
    for (const t of this.threads) {
      const task = t.task
      if (task === null) continue
      t.task = null
      this.clock.clearTimeout(t.timer)
      task.reject(new WorkerError('peer stopped while the handler ran', 'ERR_ZEROMESH_WORKER_EXIT'))
    }
    await Promise.all(this.threads.map((t) => t.worker.terminate().catch(() => {})))
    this.threads = []
    this.idle = []
  }
}
