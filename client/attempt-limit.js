// How long one attempt of a call may take before another peer is tried: the arithmetic of the
// attempt limit, apart from the timers that apply it (calls.js), as memberlist keeps its
// remainingSuspicionTime apart from its clock. Pure functions of numbers, tested by a table
// (test/unit/attempt-limit.test.js).
//
// With `attemptTimeout: 'auto'` an attempt gets a step of 4x the method's peak-EWMA latency +
// 50 ms (at least 100 ms), renewed while the peer answers other calls, until 4x the time the
// call should take there + 50 ms: its latency once for the call itself and once for each wave
// of work queued ahead of it at a busy peer (the peer's load past its declared capacity,
// `capacity` calls a wave). So a call waiting its turn in a healthy peer's queue is not an
// attempt that timed out, and one on a peer that went silent (frozen, partitioned) is after a
// step, as fast as ever. A method never measured (a fresh client's first calls) gets a step of
// a quarter of the time the call has left, renewed the same way until its deadline: a call sent
// to the first peer up in a cold start, and left there unanswered, goes elsewhere while its
// deadline still allows (seen in the lab at 120: 17 idempotent calls failed after 5 s on their
// one attempt, with 19-21 peers up by then).

const MIN_STEP_MS = 100 //  an 'auto' step is never shorter
const UNMEASURED_SHARE = 4 // a method never measured: a step of 1/4 of the time the call has left
const MARGIN_MS = 50 //     added to every 'auto' limit, for the network and the timers
const HEARD_MS = 50 //      a peer heard from within max(this, half a step) answers: alive

/**
 * The attempt's limit as { step, until } (ms from its start), or null for none (the whole
 * deadline): none for a call that is not idempotent (not retried after a timeout anyway), for
 * a method never measured on a call with no deadline, and when the step would not come before
 * the deadline. A method never measured gets a step of 1/4 of `remaining`, renewed until the deadline.
 * @param {object} o
 * @param {boolean} o.idempotent
 * @param {number|'auto'} o.given  the call's attemptTimeout (ms, or 'auto')
 * @param {number} o.remaining  ms the call has left (0: no deadline)
 * @param {number|null|undefined} o.estimate  the method's latency estimate (ms), 'auto' only
 * @param {number} o.waves  waves of work queued ahead of it at the peer (queuedWaves)
 */
export function attemptLimit ({ idempotent, given, remaining, estimate, waves }) {
  if (!idempotent) return null
  if (given !== 'auto') return remaining === 0 || given < remaining ? { step: given, until: given } : null
  if (estimate == null) {
    if (remaining === 0) return null // nothing measured and no deadline: no basis for a step
    const step = Math.max(MIN_STEP_MS, tens(remaining / UNMEASURED_SHARE))
    return step >= remaining ? null : { step, until: Infinity }
  }
  const step = Math.max(MIN_STEP_MS, tens(4 * estimate + MARGIN_MS)) // 10 ms steps: few distinct timer lists
  if (remaining !== 0 && step >= remaining) return null
  const until = Math.max(step, queuedLimit(estimate, waves))
  return { step, until: remaining !== 0 && until >= remaining ? Infinity : until }
}

/** How long a call should take at a peer with `waves` of work ahead of it: the 'auto' limit (ms from the attempt's start). */
export function queuedLimit (estimate, waves) {
  return tens(4 * estimate * (1 + waves) + MARGIN_MS)
}

/** Whether a peer last heard from at `heardAt` answers other calls now: alive, so an 'auto' step is renewed. */
export function answering (now, heardAt, step) {
  return now - heardAt < Math.max(HEARD_MS, step / 2)
}

/** The renewed step's length: the step, or what is left until `until` (in 10 ms steps, at least 10). */
export function nextStep (now, until, step) {
  return Math.min(step, Math.max(10, tens(until - now)))
}

/**
 * Waves of work queued ahead of a new call at a peer: what is in flight there past the
 * `capacity` it declared (its threads, by default), in units of that capacity; 0 for a peer
 * that declared none or is not full. In flight: this client's `others` calls on it, or the
 * `load` it reported for all its clients, the larger; nothing when this client has no other
 * call there, as the peer then takes this one ahead of the flows that have work waiting
 * (peer/fair-queue.js), and its last report may be old.
 */
export function queuedWaves (capacity, others, load) {
  if (typeof capacity !== 'number' || others <= 0) return 0
  const ahead = Math.max(others, load ?? 0) - capacity
  return ahead > 0 ? ahead / capacity : 0
}

/** `ms` rounded up to a multiple of 10. */
export function tens (ms) {
  return Math.ceil(ms / 10) * 10
}
