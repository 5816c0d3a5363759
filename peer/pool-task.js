// One request in the worker pool (worker-pool.js): queued, then handed to a thread. No
// closure per request: a closure over a batch, kept by a request context that outlived a
// young collection, held the whole batch alive into the old generation (scavenges of 3 ms on
// average at 256 in flight, under 1 ms without).
import { NO_FLOW } from './flows.js'

export class Task {
  /** @param {{ cancelled: number }} counts  the pool's counters (a cancel is counted there) */
  constructor (counts, id, method, args, ctx, resolve, reject) {
    this.counts = counts
    this.id = id
    this.method = method
    this.args = args
    this.ctx = ctx
    this.flow = ctx.flow ?? NO_FLOW // whose turn it waits for in the queue (fair-queue.js)
    this.resolve = resolve
    this.reject = reject
    this.settled = false
    this.thread = null // the thread it was handed to, while it is there
    this.suspect = false // its thread ended before beginning its batch (see recycle)
  }

  /** The client cancelled it: the thread running it or holding it aborts its ctx.signal. */
  cancel () {
    if (this.settled || this.thread === null) return
    this.counts.cancelled++
    this.thread.worker.postMessage({ type: 'cancel', id: this.id })
  }
}
