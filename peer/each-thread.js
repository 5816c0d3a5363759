// A subscription that runs in every worker thread of its peer (`eachThread: true` in a handler
// module's events export): per-thread state (a cache each thread holds) needs each thread to
// hear the event, as the blog post's primary tells each of its workers. Its handler's outcome
// on the main thread is how many threads ran it, which the ack carries (PROTOCOL.md 4.11).
export class ThreadsRan {
  /** @param {number} n  the threads that ran the handler, each to its end */
  constructor (n) {
    this.n = n
  }
}

/**
 * The value an event's ack carries for `value`, its handlers' outcome: nil, or (when a
 * subscription that runs in every thread ran) the handler runs on this peer: each thread's of
 * such a subscription, one for each other subscription (a broadcast runs them all).
 */
export function ackValue (value) {
  if (value instanceof ThreadsRan) return value.n
  if (!Array.isArray(value) || !value.some((v) => v instanceof ThreadsRan)) return null
  return value.reduce((n, v) => n + (v instanceof ThreadsRan ? v.n : 1), 0)
}
