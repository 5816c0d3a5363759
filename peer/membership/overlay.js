// The monitoring overlay: which members this peer probes once the cluster is too large for
// every peer to probe every other. As in Rapid (Suresh et al., ATC 2018), each member sits on
// K rings, ring r ordering members by a hash of (r, endpoint); on each ring a member watches
// the next one (its *subject*) and is watched by the one before it (its *observer*). So each
// peer probes at most K subjects, round robin, and is probed by at most K observers: K x 1/K
// probes of it a period, as SWIM's random probing gives, but over at most K + K connections
// whatever the cluster's size. The rings are hashed, so the graph of subjects is a random
// K-regular-ish graph: changes piggybacked on probes and acks still reach everyone in
// O(log N) rounds, and anti-entropy with a random subject still covers the cluster.
//
// Every peer computes the rings from its own member list: no wire change, no agreement
// needed. Views that differ (a member not heard of yet) only move a few edges for a while.
// Below `fullMeshBelow` other members every member is everyone's subject (classic SWIM).
//
// The hashes of an endpoint are computed once; the subjects are computed again only after the
// live set changed (O(N x K), at most once a probe round), never per message.
import { fnv1a } from '../../protocol/fnv.js'

export class Overlay {
  /**
   * @param {object} o
   * @param {string} o.self          this peer's endpoint
   * @param {number} o.rings         K: rings, so subjects and observers at most
   * @param {number} o.fullMeshBelow with fewer other live members than this, all are subjects
   */
  constructor ({ self, rings, fullMeshBelow }) {
    this.self = self
    this.rings = rings
    this.fullMeshBelow = fullMeshBelow
    this.members = new Set() // live endpoints other than self
    this.hashes = new Map() //  endpoint -> Uint32Array(rings)
    this.own = ringHashes(self, rings)
    this.dirty = true
    this.view = { subjects: [], observers: [] }
  }

  add (endpoint) {
    if (endpoint === this.self || this.members.has(endpoint)) return
    this.members.add(endpoint)
    this.dirty = true
  }

  delete (endpoint) {
    if (!this.members.delete(endpoint)) return
    this.hashes.delete(endpoint)
    this.dirty = true
  }

  /** Whether every live member is a subject (a small cluster). */
  get full () {
    return this.members.size < this.fullMeshBelow
  }

  /** The members this peer probes, in ring order (deduplicated). */
  subjects () {
    return this.current().subjects
  }

  /** The members that probe this peer, by this peer's view. */
  observers () {
    return this.current().observers
  }

  current () {
    if (!this.dirty) return this.view
    this.dirty = false
    this.view = this.full
      ? { subjects: [...this.members], observers: [...this.members] }
      : neighbours(this.own, [...this.members], (ep) => this.hashOf(ep), this.rings)
    return this.view
  }

  hashOf (endpoint) {
    let h = this.hashes.get(endpoint)
    if (h === undefined) this.hashes.set(endpoint, h = ringHashes(endpoint, this.rings))
    return h
  }
}

/**
 * The K hashes of an endpoint, one per ring: FNV-1a of "r#endpoint", finished with
 * MurmurHash3's fmix32 (FNV alone keeps endpoints that differ in their last digit, such as
 * the ports of one host, next to each other on every ring).
 */
export function ringHashes (endpoint, rings) {
  const h = new Uint32Array(rings)
  for (let r = 0; r < rings; r++) h[r] = fmix32(fnv1a(`${r}#${endpoint}`))
  return h
}

function fmix32 (h) {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/**
 * On each ring, the member right after `own` (the subject) and right before it (the
 * observer), wrapping around; ties by endpoint. Pure.
 * @param {Uint32Array} own  this peer's ring hashes
 * @param {string[]} members  the others
 * @param {(endpoint: string) => Uint32Array} hashOf
 * @param {number} rings
 */
export function neighbours (own, members, hashOf, rings) {
  const subjects = new Set()
  const observers = new Set()
  if (members.length === 0) return { subjects: [], observers: [] }
  for (let r = 0; r < rings; r++) {
    const mine = own[r]
    let next = null; let nextGap = Infinity
    let prev = null; let prevGap = Infinity
    for (const ep of members) {
      const h = hashOf(ep)[r]
      const after = (h - mine + 0x100000000) % 0x100000000 || 0x100000000 // distance forward; equal hashes sort as far
      const before = 0x100000000 - after || 0x100000000
      if (after < nextGap || (after === nextGap && ep < next)) { next = ep; nextGap = after }
      if (before < prevGap || (before === prevGap && ep < prev)) { prev = ep; prevGap = before }
    }
    subjects.add(next)
    observers.add(prev)
  }
  return { subjects: [...subjects], observers: [...observers] }
}
