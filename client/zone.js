// Zone preference, between routing and the strategy (as Envoy's zone-aware routing): a client
// given `zone` sends a method's requests to the candidates labelled with its zone while those
// have capacity, and spills the excess to the others.
//
// Capacity is what the peers declare (their service's `capacity`: the thread count of a
// worker-thread peer by default, or `--capacity`), and how much of it is used comes from the
// load every peer reports in its replies (requests in flight there, all clients together), so
// clients of one zone see the same utilization and spill together. A peer that declares no
// capacity is never counted full: its zone keeps its traffic until it refuses (busy, down).
//
// Per method, an integral controller keeps the local peers' utilization, smoothed, at TARGET
// when they cannot carry everything: the share spilled rises while it is above and falls while
// it is below, so with enough local capacity nothing spills, and a zone that lost peers sends
// its survivors about TARGET of their capacity and the rest elsewhere.
const TARGET = 0.85 //   local utilization (in flight / declared capacity) kept while spilling
const SMOOTH_MS = 500 // utilization is averaged over about this long...
const STEP_MS = 20 //    ...and the spilled share adjusted at most this often
const GAIN = 2 //        spilled share per second, per unit of utilization above or below TARGET
const FRESH_MS = 1000 // a load report older than this says nothing of now: only this client's own count is used

export class ZonePreference {
  /**
   * @param {object} o
   * @param {string} o.zone
   * @param {() => number} o.random
   */
  constructor ({ zone, random }) {
    this.zone = zone
    this.random = random
    this.methods = new Map() // method -> { list, local, remote, util, spill, at }
  }

  /**
   * The candidates to pick from for one attempt: the local ones or the others, by the
   * method's spilled share; all of them when either side has none. `list` is the router's
   * (the same array while nothing changed, so the split is cached).
   */
  narrow (method, list, now) {
    let st = this.methods.get(method)
    if (st === undefined) {
      if (this.methods.size >= 1024) this.methods.clear() // bounded: callers choose method names
      this.methods.set(method, st = { list: null, local: null, remote: null, util: null, spill: 0, at: now })
    }
    if (st.list !== list) this.split(st, list)
    if (st.local.length === 0) return st.remote
    if (st.remote.length === 0) return st.local
    if (now - st.at >= STEP_MS) this.adjust(st, now)
    return st.spill > 0 && this.random() < st.spill ? st.remote : st.local
  }

  split (st, list) {
    st.list = list
    st.local = []
    st.remote = []
    for (const p of list) (p.service?.labels?.zone === this.zone ? st.local : st.remote).push(p)
  }

  adjust (st, now) {
    const dt = now - st.at
    st.at = now
    const u = utilization(st.local, now)
    st.util = st.util === null ? u : st.util + (u - st.util) * (1 - Math.exp(-dt / SMOOTH_MS))
    st.spill = Math.min(1, Math.max(0, st.spill + GAIN * (st.util - TARGET) * dt / 1000))
  }

  /** The method's state, for stats: { local utilization, spilled share }. */
  stats () {
    const out = {}
    for (const [m, st] of this.methods) out[m] = { utilization: st.util, spill: st.spill }
    return out
  }
}

/**
 * In flight on `peers` over their declared capacity; 0 when none declares one. A peer's
 * report counts while fresh: one that gets no requests sends no reports, and its last one
 * (taken while it was full, say) must not keep it looking full for ever.
 */
export function utilization (peers, now) {
  let load = 0
  let capacity = 0
  for (const p of peers) {
    const c = p.service?.capacity
    if (c == null) continue
    load += Math.max(p.calls.size, now - p.loadAt < FRESH_MS ? p.load : 0)
    capacity += c
  }
  return capacity === 0 ? 0 : load / capacity
}
