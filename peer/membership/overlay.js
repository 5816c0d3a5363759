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
// The hashes of an endpoint are computed once, and each ring's subject and observer are kept
// as members come and go: a member added is compared with them (O(K)); only a member removed
// that was one of them makes that ring scan the live set again (O(N), for K of N removals).
// Nothing here runs per message.
import { fnv1a } from '../../protocol/fnv.js'

const SPAN = 0x100000000 // the rings' circumference: 32-bit hashes

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
    this.next = new Array(rings).fill(null) //  per ring: the subject and its distance forward...
    this.nextGap = new Array(rings).fill(Infinity)
    this.prev = new Array(rings).fill(null) //  ...and the observer and its distance back
    this.prevGap = new Array(rings).fill(Infinity)
    this.stale = new Set() // rings whose subject or observer was removed: scanned again when asked
    this.changed = true
    this.view = { subjects: [], observers: [] }
  }

  add (endpoint) {
    if (endpoint === this.self || this.members.has(endpoint)) return
    this.members.add(endpoint)
    this.changed = true
    const h = this.hashOf(endpoint)
    for (let r = 0; r < this.rings; r++) this.consider(r, endpoint, h[r])
  }

  delete (endpoint) {
    if (!this.members.delete(endpoint)) return
    this.hashes.delete(endpoint)
    this.changed = true
    for (let r = 0; r < this.rings; r++) {
      if (this.next[r] === endpoint || this.prev[r] === endpoint) this.stale.add(r)
    }
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

  /** The view, rebuilt only after a change; an unchanged list stays the same array. */
  current () {
    if (!this.changed) return this.view
    this.changed = false
    for (const r of this.stale) this.rescan(r)
    this.stale.clear()
    const subjects = this.full ? [...this.members] : [...new Set(this.next.filter((ep) => ep !== null))]
    const observers = this.full ? subjects : [...new Set(this.prev.filter((ep) => ep !== null))]
    this.view = {
      subjects: same(subjects, this.view.subjects) ? this.view.subjects : subjects,
      observers: same(observers, this.view.observers) ? this.view.observers : observers,
    }
    return this.view
  }

  /** Ring `r`'s subject and observer from every live member (after one of them was removed). */
  rescan (r) {
    this.next[r] = null; this.nextGap[r] = Infinity
    this.prev[r] = null; this.prevGap[r] = Infinity
    for (const ep of this.members) this.consider(r, ep, this.hashOf(ep)[r])
  }

  /** Member `ep`, at hash `h` on ring `r`, replaces the ring's subject or observer if nearer (ties by endpoint). */
  consider (r, ep, h) {
    const after = distance(this.own[r], h)
    const before = SPAN - after || SPAN
    if (after < this.nextGap[r] || (after === this.nextGap[r] && ep < this.next[r])) { this.next[r] = ep; this.nextGap[r] = after }
    if (before < this.prevGap[r] || (before === this.prevGap[r] && ep < this.prev[r])) { this.prev[r] = ep; this.prevGap[r] = before }
  }

  hashOf (endpoint) {
    let h = this.hashes.get(endpoint)
    if (h === undefined) this.hashes.set(endpoint, h = ringHashes(endpoint, this.rings))
    return h
  }
}

/** How far forward `h` is from `mine` on a ring; equal hashes sort as far as can be. */
function distance (mine, h) {
  return (h - mine + SPAN) % SPAN || SPAN
}

function same (a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The K hashes of an endpoint, one per ring: FNV-1a of "r#endpoint", finished with
 * MurmurHash3's fmix32 (FNV alone keeps endpoints that differ in their last digit, such as
 * the ports of one host, next to each other on every ring).
 */
export function ringHashes (endpoint, rings) {
  let known = HASHED.get(rings)
  if (known === undefined) HASHED.set(rings, known = new Map())
  let h = known.get(endpoint)
  if (h !== undefined) return h
  if (known.size >= HASHED_MAX) known.clear()
  known.set(endpoint, h = hashRings(endpoint, rings))
  return h
}

// Endpoints hashed already, for every overlay of the process (a simulation holds a thousand
// peers, each hashing the same thousand members); never changed once made.
const HASHED = new Map() // rings -> endpoint -> Uint32Array
const HASHED_MAX = 65536

function hashRings (endpoint, rings) {
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
 * observer), wrapping around; ties by endpoint. Pure: what the Overlay keeps as members come
 * and go, computed from scratch.
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
      const after = distance(mine, h)
      const before = SPAN - after || SPAN
      if (after < nextGap || (after === nextGap && ep < next)) { next = ep; nextGap = after }
      if (before < prevGap || (before === prevGap && ep < prev)) { prev = ep; prevGap = before }
    }
    subjects.add(next)
    observers.add(prev)
  }
  return { subjects: [...subjects], observers: [...observers] }
}
