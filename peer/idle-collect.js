// Memory back after a burst. A peer that stops getting requests after a burst of large
// ones (or after a client that never read its replies hung up) holds the burst's buffers
// until V8 next collects, and an idle process allocates nothing, so it may never: the RSS
// stays up for good. Every Peer runs this unless told not to (its collectWhenIdle option):
// once a second it reads the process's RSS; when the RSS is more than `slackBytes` above the
// lowest it has seen and no message came for `idleMs`, it asks for a full collection (of the
// main thread and the handler threads), at most once per `minGapMs`. The freed buffers go
// back to the allocator, which gives them back to the system as its settings tell it
// (docs/guides/deploying.md, "Memory": `zeromesh peer` sets them; a process of your own sets
// them in its environment). What a collection gave back is read a tick later: buffers freed
// behind it (ArrayBuffers' backing stores, the threads' heaps, collected on a message) are not
// given back at once, and read at once a collection looked to give back nothing, so the gap
// doubled, and after a barrage the next collection was minutes away.
import { systemClock } from '../runtime/clock.js'

/**
 * @param {object} o
 * @param {() => number} o.activity  a count that grows with each request (idle while it does not)
 * @param {() => void} o.collect  a full collection, of every thread that holds buffers
 * @param {(info: { before: number, after: number, floor: number }) => void} [o.onCollect]  what a collection gave back, read a tick later, and the lowest RSS seen
 * @param {number} [o.slackBytes]  growth over the post-collection RSS that is worth a collection
 * @param {number} [o.idleMs]
 * @param {number} [o.minGapMs]
 * @param {number} [o.everyMs]
 * @param {() => number} [o.rss]
 * @param {{ now(): number, setTimeout(fn: () => void, ms: number): unknown, clearTimeout(t: unknown): void }} [o.clock]  the peer's
 * @returns {{ stop(): void }}
 */
export function collectWhenIdle ({ activity, collect, onCollect = () => {}, slackBytes = 32 * 1024 * 1024, idleMs = 2000, minGapMs = 10000, everyMs = 1000, rss = () => process.memoryUsage.rss(), clock = systemClock }) {
  let floor = rss() // the lowest RSS seen: what an idle peer needs
  let lastActivity = activity()
  let quietSince = clock.now()
  let lastCollect = -Infinity
  let gap = minGapMs // doubles (to 5 min) while collections give back little
  let collected = null // the RSS before the last collection, until the next tick reads what it gave back
  let timer = null
  let stopped = false
  const every = () => { // a tick each everyMs; it never keeps the process alive
    if (stopped) return
    timer = clock.setTimeout(() => { tick(); every() }, everyMs)
    timer?.unref?.()
  }
  const tick = () => {
    const now = clock.now()
    if (collected !== null) {
      const before = collected
      const after = rss()
      collected = null
      gap = before - after < slackBytes / 4 ? Math.min(gap * 2, 300000) : minGapMs
      onCollect({ before, after, floor })
    }
    const a = activity()
    if (a !== lastActivity) { lastActivity = a; quietSince = now; return }
    const before = rss()
    if (before < floor) floor = before
    if (before - floor < slackBytes || now - quietSince < idleMs || now - lastCollect < gap) return
    lastCollect = now
    collect()
    collected = before
  }
  every()
  return { stop: () => { stopped = true; clock.clearTimeout(timer) } }
}
