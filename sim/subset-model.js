// The spread of load over subsets, computed exactly, at any size: N members, C clients, each a
// real Roster (client/roster.js: its subset, its moves) deciding with the real crowded()
// (client/rebalance.js), on counts that are exact and current (what the peers' `cc` says
// within its window). No sockets, no clocks, no requests: each client spreads its load evenly
// over its subset (the balancer does, within noise), so a peer is offered its number of
// clients over the subset size, and the spread of load is the spread of those counts.
// test/scenarios/subsets.scenario.js runs it at 1,000 x 1,000; bench/cluster/subsets.js
// runs the whole-system simulation beside it.
import { Roster } from '../client/roster.js'
import { crowded } from '../client/rebalance.js'
import { MemberState } from '../protocol/constants.js'

export class SubsetModel {
  /**
   * @param {{ members: number, clients: number, subset: number, seed?: number }} o
   */
  constructor ({ members, clients, subset, seed = 1 }) {
    let s = seed >>> 0 || 1
    this.random = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 2 ** 32 }
    this.endpoints = Array.from({ length: members }, (_, i) => `tcp://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:5555`)
    const table = { entries: new Map(), get: () => undefined } // nothing connected: the roster only chooses
    this.rosters = Array.from({ length: clients }, () => {
      const r = new Roster({ maxPeers: 65536, subset, key: Math.floor(this.random() * 2 ** 32).toString(36), table, services: null })
      for (const ep of this.endpoints) r.record({ endpoint: ep, incarnation: 1, state: MemberState.ALIVE }, null, 0)
      return r
    })
    this.subsets = this.rosters.map((r) => r.choose())
    this.counts = new Map(this.endpoints.map((ep) => [ep, 0]))
    for (const set of this.subsets) for (const ep of set) this.counts.set(ep, this.counts.get(ep) + 1)
    this.moves = 0
  }

  /** Clients per live member, over their mean: { max, p99 } (the offered load's spread). */
  spread () {
    const v = [...this.counts.values()].sort((a, b) => a - b)
    const mean = v.reduce((a, b) => a + b, 0) / v.length
    return { mean, max: v[v.length - 1] / mean, p99: v[Math.ceil(0.99 * v.length) - 1] / mean }
  }

  /** Client `c` takes its subset again; the counts follow. Returns the connections it dropped and made. */
  resubset (c) {
    const before = this.subsets[c]
    const after = this.rosters[c].choose()
    let dropped = 0
    let made = 0
    for (const ep of before) if (!after.has(ep)) { dropped++; if (this.counts.has(ep)) this.counts.set(ep, this.counts.get(ep) - 1) }
    for (const ep of after) if (!before.has(ep)) { made++; this.counts.set(ep, this.counts.get(ep) + 1) }
    this.subsets[c] = after
    return { dropped, made }
  }

  /** One round: every client, in a random order, asks its peers' counts and moves at most one connection. Returns the moves made. */
  round () {
    const order = this.rosters.map((_, i) => i)
    for (let i = order.length - 1; i > 0; i--) { const j = Math.floor(this.random() * (i + 1)); [order[i], order[j]] = [order[j], order[i]] }
    let moves = 0
    for (const c of order) {
      const held = this.subsets[c]
      const from = crowded([...held].map((ep) => [ep, this.counts.get(ep)]))
      if (from === null) continue
      const to = this.rosters[c].candidate(held)
      if (to === null) continue
      this.rosters[c].move(from, to)
      this.resubset(c)
      moves++
    }
    this.moves += moves
    return moves
  }

  /** Member `ep` dies: every client takes its subset again. Returns the connections that were to it, and the others dropped and made. */
  kill (ep) {
    let own = 0
    let others = 0
    let made = 0
    for (const r of this.rosters) r.record({ endpoint: ep, incarnation: 1, state: MemberState.DEAD }, null, 0)
    for (let c = 0; c < this.rosters.length; c++) {
      const had = this.subsets[c].has(ep)
      const d = this.resubset(c)
      if (had) own++
      others += d.dropped - (had ? 1 : 0)
      made += d.made
    }
    this.counts.delete(ep)
    return { own, others, made }
  }
}
