// The member table and its merge rule: which of two claims about a member wins.
// A claim is { endpoint, incarnation, state, meta }. A higher incarnation always wins; at
// the same incarnation the stronger state wins (alive < suspect < dead < left). Claims about
// this peer itself are never applied: they are refuted by raising its incarnation. What a
// claim from the network may do before it gets here is admission.js's business.
// Dead and left members are reaped (forgotten) a while after they died or left, so the
// table does not grow with every peer that ever lived.

import { MemberState, memberStateNames, outranks } from '../../protocol/constants.js'
import { metaSize } from '../../protocol/codec.js'
import { fnv1a } from '../../protocol/fnv.js'

export const State = MemberState
export const stateNames = memberStateNames

/** Whether `update` replaces `current` (undefined: a member not known yet). Pure. */
export function supersedes (current, update) {
  if (current === undefined) return update.state === State.ALIVE || update.state === State.SUSPECT
  return outranks(update, current)
}

export class MemberTable {
  /** @param {{ endpoint: string, incarnation: number, meta: object, service?: number|null }} self */
  constructor (self) {
    this.self = entry(self.endpoint, self.incarnation, State.ALIVE, self.meta, 0)
    this.self.service = self.service ?? null
    this.map = new Map([[self.endpoint, this.self]])
    this.sum = entryHash(this.self) // see digest()
    this.graves = [] // [since, endpoint] of members that died or left, oldest first (see reap)
  }

  get (endpoint) {
    return this.map.get(endpoint)
  }

  /** Every member, this peer included. */
  all () {
    return [...this.map.values()]
  }

  /** Members other than this peer that are alive or suspect: the ones to probe and gossip with. */
  live () {
    const out = []
    for (const m of this.map.values()) if (m !== this.self && m.state <= State.SUSPECT) out.push(m)
    return out
  }

  /**
   * Applies a claim. Returns 'changed' (the table changed: pass the claim on), 'refute'
   * (a claim that this peer is not alive: the caller must refute it) or null (stale).
   */
  apply (update, now = 0) {
    if (update.endpoint === this.self.endpoint) {
      if (update.incarnation < this.self.incarnation) return null
      if (update.state === State.ALIVE && update.incarnation === this.self.incarnation) return null
      return 'refute'
    }
    const current = this.map.get(update.endpoint)
    if (!supersedes(current, update)) return null
    const meta = update.meta ?? current?.meta ?? {}
    const next = entry(update.endpoint, update.incarnation, update.state, meta, now, meta === current?.meta ? current.metaBytes : undefined)
    // A claim relayed by an older peer has lost the service digest: the one held stays.
    next.service = update.service ?? current?.service ?? null
    if (current !== undefined && current.state <= State.SUSPECT) this.sum = (this.sum - entryHash(current)) >>> 0
    if (next.state <= State.SUSPECT) this.sum = (this.sum + entryHash(next)) >>> 0
    else if (current === undefined || current.state <= State.SUSPECT) this.graves.push([now, next.endpoint])
    else next.since = current.since // dead, then left: reaped from the first
    this.map.set(update.endpoint, next)
    return 'changed'
  }

  /**
   * Forgets members dead or left for `after` ms or more (memberlist keeps them 30 s, so a
   * late claim about them is recognised as stale). Returns their entries.
   */
  reap (now, after) {
    const out = []
    while (this.graves.length > 0 && now - this.graves[0][0] >= after) {
      const [since, ep] = this.graves.shift()
      const m = this.map.get(ep)
      if (m === undefined || m.state <= State.SUSPECT || m.since !== since) continue // came back since
      this.map.delete(ep)
      out.push(m)
    }
    return out
  }

  /** Raises this peer's incarnation above `seen` and returns its new alive claim. */
  refute (seen) {
    this.sum = (this.sum - entryHash(this.self)) >>> 0
    this.self.incarnation = Math.max(this.self.incarnation, seen) + 1
    this.sum = (this.sum + entryHash(this.self)) >>> 0
    return { ...this.self }
  }

  /** This peer serves something else now: its digest changes and its incarnation rises, so the change wins everywhere. */
  setService (digest) {
    this.self.service = digest
    return this.refute(this.self.incarnation)
  }

  /** Marks this peer as leaving (its digest entry goes too). */
  leave () {
    if (this.self.state <= State.SUSPECT) this.sum = (this.sum - entryHash(this.self)) >>> 0
    this.self.state = State.LEFT
  }

  /**
   * A short digest of who is alive or suspect, equal on every peer that agrees: clients
   * compare it to know when to fetch the member list again. The sum, modulo 2^32, of the
   * FNV-1a hash of "endpoint#incarnation" of every alive or suspect member, kept up to date
   * as claims are applied, so it costs nothing to read whatever the cluster size.
   */
  digest () {
    return this.sum
  }
}

/**
 * A table entry; `metaBytes` (meta packed) and `since` (when it last changed) are for bounds;
 * `service` is the digest of what the member serves (PROTOCOL.md 4.8), null when its claims
 * carry none (an older peer: it may serve anything).
 */
function entry (endpoint, incarnation, state, meta, since, metaBytes = metaSize(meta)) {
  return { endpoint, incarnation, state, meta, since, metaBytes, service: null }
}

/** An upper bound of the bytes a claim about `m` takes in a frame (see PROTOCOL.md 4.6). */
export function claimBytes (m) {
  const by = m.state === 1 && m.by !== undefined ? Buffer.byteLength(m.by) : 0 // a suspicion carries its originator
  return Buffer.byteLength(m.endpoint) + by + m.metaBytes + 22 // array, string, incarnation, state, by and service headers
}

/** FNV-1a (32 bit) of "endpoint#incarnation", over UTF-16 code units. */
export function entryHash (m) {
  return fnv1a(`${m.endpoint}#${m.incarnation}`)
}
