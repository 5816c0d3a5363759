// What the live view (`/` on --http, docs/guides/observing.md) shows, sampled once a second: the
// cluster as this peer sees it (members with state, incarnation, version and what they serve)
// and this peer's own figures (req/s, p50/p99 over the last seconds, in flight, queue, busy
// threads, refusals). What other members serve comes from a watcher, when one is given (a
// client of the cluster that asks them, in an unsecured cluster), started while someone views
// the page and closed a while after the last one left; a member whose service digest is this
// peer's serves what this peer does.
import { BOUNDS_MS } from './histogram.js'

const WINDOW_S = 10 // seconds of the latency histogram p50 and p99 are taken over
const HISTORY = 60 //  seconds of req/s and p99 kept for the page's sparklines
const WATCH_LINGER_MS = 30000 // the watcher stays this long after the last viewer left

export class ClusterView {
  /**
   * @param {import('../peer/peer.js').Peer} peer
   * @param {import('./histogram.js').LatencyHistogram} latency  the peer's (ops/metrics.js)
   * @param {{ watch?: () => { services(): Map<string, object|null>, close(): unknown }, now?: () => number }} [o]
   *   `watch`: starts a watcher of what members serve (or null: only this peer's digest is known)
   */
  constructor (peer, latency, o = {}) {
    this.peer = peer
    this.latency = latency
    this.watch = o.watch ?? null
    this.watcher = null
    this.viewers = 0
    this.viewedAt = 0
    this.now = o.now ?? Date.now
    this.marks = [] //   { at, counts, requests, refused } once a second, the last WINDOW_S + 1
    this.history = [] // { at, rps, p99 } once a second, the last HISTORY
    this.current = null
    this.sample()
  }

  /** `n` pages view it now: the watcher runs while there are any, and a while after. */
  viewing (n) {
    this.viewers = n
    this.viewedAt = this.now()
    if (n > 0 && this.watcher === null && this.watch !== null) this.watcher = this.watch()
  }

  close () {
    this.watcher?.close()
    this.watcher = null
  }

  /** Takes this second's figures; returns the state the page shows. */
  sample () {
    const at = this.now()
    if (this.watcher !== null && this.viewers === 0 && at - this.viewedAt > WATCH_LINGER_MS) this.close()
    const known = this.watcher?.services() ?? null
    const s = this.peer.stats()
    const refused = (s.busy ?? 0) + (s.drained ?? 0) + (s.unknown ?? 0) + (s.invalid ?? 0)
    const mark = { at, counts: Float64Array.from(this.latency.counts), requests: s.requests ?? 0, refused }
    this.marks.push(mark)
    if (this.marks.length > WINDOW_S + 1) this.marks.shift()
    const last = this.marks.length > 1 ? this.marks[this.marks.length - 2] : null
    const first = this.marks[0]
    const secs = last === null ? 0 : (at - last.at) / 1000
    const window = diff(mark.counts, first.counts)
    const own = this.peer.service()
    const threads = s.threads
    const self = {
      endpoint: this.peer.endpoint,
      ready: this.peer.ready === true,
      rps: secs > 0 ? Math.round((mark.requests - last.requests) / secs) : 0,
      refusedPerSec: secs > 0 ? Math.round((mark.refused - last.refused) / secs) : 0,
      p50: quantile(window, 0.5),
      p99: quantile(window, 0.99),
      inflight: s.inflight ?? 0,
      queued: threads?.queued ?? 0,
      threads: threads?.size ?? 0,
      busyThreads: threads === null ? 0 : Math.max(0, Math.min(threads.size, threads.load - threads.queued)),
      streams: s.streams?.open ?? 0,
    }
    this.history.push({ at, rps: self.rps, p99: self.p99 })
    if (this.history.length > HISTORY) this.history.shift()
    const members = this.peer.members().map((m) => ({
      endpoint: m.endpoint,
      state: m.state,
      incarnation: m.incarnation,
      version: typeof m.meta?.version === 'string' ? m.meta.version : null,
      self: m.endpoint === self.endpoint,
      serves: m.service !== null && m.service === own.digest ? served(own) : served(known?.get(m.endpoint)),
    }))
    members.sort((a, b) => (b.self - a.self) || a.endpoint.localeCompare(b.endpoint))
    this.current = { at, self, members, history: this.history }
    return this.current
  }
}

/**
 * What a member serves, as the page shows it, or null when not known: its contracts by name,
 * version and methods (their schemas stay with `zeromesh describe`), and its subscriptions.
 */
function served (d) {
  if (d === null || d === undefined || d === 'any') return null
  const contracts = (d.contracts ?? []).map((c) => ({ name: c.name, version: c.version, methods: c.methods.map((m) => ({ name: m.name, stream: m.stream })) }))
  const events = (d.events ?? []).map((e) => ({ event: e.event, group: e.group }))
  return { methods: [...d.methods].sort(), version: d.version ?? null, labels: { ...d.labels }, contracts, events }
}

function diff (a, b) {
  const out = new Float64Array(a.length)
  for (let i = 0; i < a.length; i++) out[i] = a[i] - b[i]
  return out
}

/**
 * The q-quantile in ms of a histogram's bucket counts (the last bucket: above every bound),
 * interpolated within its bucket as Prometheus's histogram_quantile does; null when empty.
 */
export function quantile (counts, q) {
  let total = 0
  for (const c of counts) total += c
  if (total === 0) return null
  const rank = q * total
  let seen = 0
  for (let i = 0; i < counts.length; i++) {
    if (seen + counts[i] >= rank && counts[i] > 0) {
      if (i === BOUNDS_MS.length) return BOUNDS_MS[BOUNDS_MS.length - 1] // above the last bound: all we know
      const lo = i === 0 ? 0 : BOUNDS_MS[i - 1]
      return +(lo + (BOUNDS_MS[i] - lo) * ((rank - seen) / counts[i])).toFixed(3)
    }
    seen += counts[i]
  }
  return null
}
