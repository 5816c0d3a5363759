// What the worker pool keeps of one thread: the requests handed to it and not yet all
// answered (one hand-off, or two when the next was handed ahead), how many of them answered,
// and where the thread is. The thread writes the place of the request it begins into
// `progress` (shared memory), counted since it was last idle; `base` is how many of those
// requests were answered and let go since, so the one it runs is tasks[progress - base].

const AHEAD_MAX_COUNT = 2 ** 30 // requests counted before the thread must go idle once: no hand-off ahead past it

export class PoolThread {
  /**
   * @param {import('node:worker_threads').Worker} worker
   * @param {SharedArrayBuffer} progress  4 bytes the thread writes its place into
   */
  constructor (worker, progress) {
    this.worker = worker
    this.progress = new Int32Array(progress)
    this.tasks = [] //  handed, the first `done` of them answered
    this.done = 0
    this.base = 0 //    requests answered and let go since the thread was last idle
    this.ends = [] //   where each hand-off it holds ends, counted as progress counts
    this.timer = null // the pool's deadline check (worker-pool.js watch)
    this.ready = false
    this.streams = new Map() // sid -> ThreadStream
  }

  /** The place in `tasks` of the request the thread runs (below `done`: it has not begun the next). */
  get at () {
    return Atomics.load(this.progress, 0) - this.base
  }

  /** Takes `batch`; returns where the thread counts it from (the hand-off's `at`). */
  take (batch) {
    if (this.tasks.length === 0) {
      this.done = 0
      this.base = 0
      Atomics.store(this.progress, 0, -1)
    }
    const at = this.base + this.tasks.length
    for (const task of batch) this.tasks.push(task)
    this.ends.push(at + batch.length)
    return at
  }

  /**
   * Whether it may be handed its next requests before it answers those it has: it holds one
   * hand-off, not two, with no suspect in it (a suspect runs alone), and its count since it
   * was last idle stays far from the 2^31 of `progress`.
   */
  mayTakeAhead () {
    if (!this.ready || this.tasks.length === 0 || this.ends.length !== 1 || this.base + this.tasks.length >= AHEAD_MAX_COUNT) return false
    for (let i = this.done; i < this.tasks.length; i++) if (this.tasks[i].suspect) return false
    return true
  }

  /** After answers: lets go of those answered. Returns true when all are, and the thread is idle. */
  letGoAnswered () {
    if (this.done === this.tasks.length) { this.clear(); return true }
    this.base += this.done
    this.tasks = this.tasks.slice(this.done)
    this.done = 0
    while (this.ends.length > 0 && this.ends[0] <= this.base) this.ends.shift()
    return false
  }

  /** Holds nothing any more (idle, recycled, or the pool stopped). */
  clear () {
    this.tasks = []
    this.done = 0
    this.ends = []
  }
}
