// A virtual clock for simulations: timers in a binary heap, time that moves only when told.
// `advance(ms)` fires due timers in order and, after each instant, lets every promise chain
// the callbacks started run to completion, so async code behaves as on a real clock.
// (fake-timers scans all timers per firing; with thousands of members that is too slow.)
// For tests, the two waits a test needs instead of guessing how far to advance: `settle`
// (a promise's outcome) and `until` (a condition), each moving time on a step at a time and
// bounded in this clock's time (docs/guides/testing.md).
import { TimeoutError } from '../protocol/errors.js'

const STEP_MS = 5 //          settle() and until() move time this much at a time...
const SETTLE_WITHIN_MS = 60000 // ...settle() at most this long...
const UNTIL_WITHIN_MS = 10000 //  ...and until() this long, in the clock's time

export class VirtualClock {
  constructor (start = 0) {
    this.time = start
    this.heap = [] // [due, seq, fn] ordered by due, then seq
    this.seq = 0
    this.cancelled = new Set()
  }

  now () {
    return this.time
  }

  setTimeout (fn, ms) {
    const id = ++this.seq
    push(this.heap, [this.time + Math.max(0, ms), id, fn])
    return id
  }

  clearTimeout (id) {
    if (id != null) this.cancelled.add(id)
  }

  /** Moves time forward by `ms`, running every timer due on the way. */
  async advance (ms) {
    const end = this.time + ms
    await settle()
    while (this.heap.length > 0 && this.heap[0][0] <= end) {
      const due = this.heap[0][0]
      this.time = due
      while (this.heap.length > 0 && this.heap[0][0] === due) {
        const [, id, fn] = pop(this.heap)
        if (this.cancelled.delete(id)) continue
        fn()
      }
      await settle()
    }
    this.time = end
  }

  /**
   * `promise`'s value, or its error, with time moved on `step` ms at a time until it settles;
   * a TimeoutError once `within` ms of this clock's time passed without that.
   */
  async settle (promise, { step = STEP_MS, within = SETTLE_WITHIN_MS } = {}) {
    let out = null
    Promise.resolve(promise).then((value) => { out = { value } }, (error) => { out = { error } })
    await settle()
    for (let waited = 0; out === null; waited += step) {
      if (waited >= within) throw new TimeoutError(`zeromesh/testing: the promise did not settle within ${within} ms of virtual time`)
      await this.advance(step)
    }
    if ('error' in out) throw out.error
    return out.value
  }

  /**
   * `fn()`'s value once it stops throwing (or rejecting), with time moved on `step` ms between
   * tries; its last error once `within` ms of this clock's time passed. For a condition, as
   * `() => assert.equal(peer.stats().inflight, 0)`.
   */
  async until (fn, { step = STEP_MS, within = UNTIL_WITHIN_MS } = {}) {
    for (let waited = 0; ; waited += step) {
      try {
        return await fn()
      } catch (err) {
        if (waited >= within) throw err
        await this.advance(step)
      }
    }
  }
}

/** Waits until the microtask queue is empty (a macrotask turn). */
function settle () {
  return new Promise((resolve) => setImmediate(resolve))
}

function less (a, b) {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])
}

function push (h, x) {
  h.push(x)
  let i = h.length - 1
  while (i > 0) {
    const p = (i - 1) >> 1
    if (!less(h[i], h[p])) break
    const t = h[i]; h[i] = h[p]; h[p] = t
    i = p
  }
}

function pop (h) {
  const top = h[0]
  const last = h.pop()
  if (h.length > 0) {
    h[0] = last
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < h.length && less(h[l], h[m])) m = l
      if (r < h.length && less(h[r], h[m])) m = r
      if (m === i) break
      const t = h[i]; h[i] = h[m]; h[m] = t
      i = m
    }
  }
  return top
}
