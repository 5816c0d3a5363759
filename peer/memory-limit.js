// A peer within its process's memory limit, whatever comes in (issue 50): thresholds and
// actions as they are crossed, in the manner of Envoy's overload manager. ZeroMQ bounds its
// queues in messages and each frame in bytes, but not a message's frames: a client that sends
// one message of frames without end has libzmq hold every frame until the message ends, and
// nothing reaches the peer's code to refuse. Garbage V8 has not collected yet counts too. So
// the process's RSS is read every `everyMs` (3 us each: 50 a second cost 0.02% of a core), as
// fast as loopback can fill memory (1.3 GB/s seen):
//
// - at `collectAt` of the limit, a full collection of every heap (at most every 200 ms):
//   buffers already let go are most of what a burst leaves;
// - at `shedAt` of the limit once a collection has had its moment, every connection is
//   closed (`shed`): libzmq drops what its queues hold, clients reconnect within their
//   reconnect interval and carry on, and the process is not killed for memory. At most once
//   every `shedGapMs`;
// - and between the two the peer takes less new work: its budget for requests in flight
//   (maxInflightBytes) shrinks in step (`room`, from 1 at `collectAt` to 0 at `shedAt`), and
//   past `shedAt` (`pressed`) new requests and streams are answered busy. What holds the
//   memory may be the handlers' own or garbage, which closing connections does not give back,
//   and new work would only add to it (a client that never reads made garbage faster than
//   the collections freed it: 553 MB of RSS against a 512 MiB cgroup).
//
// A main thread that runs handlers can be busy for a long while with a burst (timers wait
// their turn), so what the peer receives is counted too (`received`): every CHECK_BYTES, a
// check then and there.
//
// The limit is the peer's memoryLimit option (peer/options.js: the cgroup's limit by default).
import os from 'node:os'

export const COLLECT_AT = 0.6
export const SHED_AT = 0.8
// A burst of large requests makes garbage at hundreds of MB a second; a full collection of a
// peer's heaps takes a few ms (its buffers live outside them): five a second at most.
const COLLECT_GAP_MS = 200
const CHECK_BYTES = 8 * 1024 * 1024

/**
 * @param {object} o
 * @param {number} o.limit  bytes of RSS the process may use
 * @param {() => void} o.collect  a full collection of every heap
 * @param {(rss: number) => void} o.shed  closes every connection
 * @param {(what: 'collect'|'shed', info: { rss: number, after?: number }) => void} [o.onAction]
 * @param {() => number} [o.rss]
 * @param {() => number} [o.now]
 * @param {number} [o.everyMs]
 * @param {number} [o.shedGapMs]
 * @param {(fn: () => void, ms: number) => { unref?(): void }} [o.setInterval]
 * @param {(timer: unknown) => void} [o.clearInterval]
 * @returns {{ check(): void, received(bytes: number): void, stop(): void, readonly pressed: boolean, readonly room: number }}
 */
export function watchMemoryLimit ({
  limit, collect, shed, onAction = () => {}, rss = () => process.memoryUsage.rss(), now = Date.now,
  everyMs = 20, shedGapMs = 5000, setInterval: every = setInterval, clearInterval: stopEvery = clearInterval,
}) {
  const collectAt = limit * COLLECT_AT
  const shedAt = limit * SHED_AT
  let lastCollect = -Infinity
  let lastShed = -Infinity
  let pressed = false
  let room = 1
  const check = () => {
    const r = rss()
    pressed = r >= shedAt
    room = r < collectAt ? 1 : pressed ? 0 : (shedAt - r) / (shedAt - collectAt)
    if (r < collectAt) return
    const t = now()
    if (t - lastCollect >= COLLECT_GAP_MS) {
      lastCollect = t
      collect()
      onAction('collect', { rss: r, after: rss() })
      return
    }
    // Past shedAt, and a collection 50 ms ago or more did not bring it down (the freed buffers
    // go back a moment after the collection: ArrayBuffers are swept on a thread of V8's).
    if (r >= shedAt && t - lastCollect >= 50 && t - lastShed >= shedGapMs) {
      lastShed = t
      shed(r)
      onAction('shed', { rss: r })
    }
  }
  const timer = every(check, everyMs)
  timer.unref?.()
  let bytes = 0
  const received = (n) => {
    bytes += n
    if (bytes < CHECK_BYTES) return
    bytes = 0
    check()
  }
  return { check, received, stop: () => stopEvery(timer), get pressed () { return pressed }, get room () { return room } }
}

/**
 * The memory limit of this process by default: its cgroup's (a container's limit), when one
 * is set below the machine's memory; otherwise 0 (none).
 */
export function defaultMemoryLimit (constrained = process.constrainedMemory?.() ?? 0, total = os.totalmem()) {
  return constrained > 0 && constrained < total ? constrained : 0
}
