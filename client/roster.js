// The members a client knows of, from the member lists it takes in, and which of them it
// connects to: the subset (subset.js) for the methods it calls. A client is not a member; this
// is its notebook. A member the lists show dead or left is remembered for TOMBSTONE_MS, so a
// list from a peer that lags (still shows it suspect, at the same incarnation) does not bring
// it back. At most `maxPeers` members are held.
import { MemberState } from '../protocol/constants.js'
import { isNews } from '../protocol/claims.js'
import { chooseSubset, rank } from './subset.js'
import { ANY } from './services.js'
import { subscriptionKey } from '../protocol/events.js'

const TOMBSTONE_MS = 60000 // a member shown dead or left is remembered this long
const MAX_METHODS = 1024 //   methods remembered as called (callers choose the names)
const MAX_MOVES = 64 //       members remembered as moved to, and as moved away from

export class Roster {
  /**
   * @param {object} o
   * @param {number} o.maxPeers   members held at most
   * @param {number} o.subset     members connected at most (0: all)
   * @param {string} o.key        this client's own random key, for its ranking
   * @param {import('./peer-table.js').PeerTable} o.table    the connected peers
   * @param {import('./services.js').ServiceBook} o.services  what peers said they serve
   * @param {((endpoint: string) => boolean)|null} [o.local]  whether a member is in the client's zone (null: it has none)
   */
  constructor (o) {
    this.o = o
    this.members = new Map() // endpoint -> { incarnation, state, service, since }
    this.methods = new Set() //  methods the client called
    this.prefer = new Set() //   members moved to, to even out the peers' clients (rebalance.js)...
    this.avoid = new Set() //    ...and moved away from
  }

  /**
   * Moves one connection of the subset from `from` (a crowded peer) to `to`: `to` ranks first
   * from now on, `from` last. Each set holds at most MAX_MOVES members, the oldest forgotten.
   */
  move (from, to) {
    this.prefer.delete(from)
    this.avoid.delete(to)
    this.avoid.add(from)
    this.prefer.add(to)
    for (const set of [this.prefer, this.avoid]) while (set.size > Math.min(MAX_MOVES, this.o.subset)) set.delete(set.values().next().value)
  }

  /**
   * The member a move from `from` goes to: the best-ranked alive one not in `subset` and not
   * moved away from, in `from`'s zone or out of it as `from` is (for a client with a zone), or null.
   */
  candidate (subset, from = null) {
    let outside = this.alive().filter((ep) => !subset.has(ep) && !this.avoid.has(ep))
    const local = this.o.local ?? null
    if (local !== null && from !== null) {
      const same = outside.filter((ep) => local(ep) === local(from))
      if (same.length > 0) outside = same
    }
    return outside.length === 0 ? null : rank(outside, this.o.key)[0]
  }

  get (endpoint) {
    return this.members.get(endpoint)
  }

  /** Forgets members dead or left for TOMBSTONE_MS. */
  reap (now) {
    for (const [ep, r] of this.members) {
      if (r.state > MemberState.SUSPECT && now - r.since > TOMBSTONE_MS) {
        this.members.delete(ep)
        this.prefer.delete(ep)
        this.avoid.delete(ep)
      }
    }
  }

  /**
   * A claim about a member not connected. Returns false when it was refused for room
   * (maxPeers, counting `outside` connected peers no list named), true otherwise.
   */
  offer (m, outside, now) {
    const held = this.members.get(m.endpoint)
    if (!isNews(held, m)) return true // stale, or not alive about a member not held: nothing to hold (protocol/claims.js)
    if (held === undefined && this.members.size + outside >= this.o.maxPeers) return false
    this.members.set(m.endpoint, { incarnation: m.incarnation, state: m.state, service: m.service ?? held?.service ?? null, since: now })
    return true
  }

  /** A claim about a connected member, taken by the client (newer than what it held). */
  record (m, service, now) {
    this.members.set(m.endpoint, { incarnation: m.incarnation, state: m.state, service, since: now })
  }

  /** Connected peers that no list named (seeds not listed yet). */
  outside () {
    let n = 0
    for (const ep of this.o.table.entries.keys()) if (!this.members.has(ep)) n++
    return n
  }

  alive () {
    const out = []
    for (const [ep, r] of this.members) if (r.state <= MemberState.SUSPECT) out.push(ep)
    return out
  }

  /** Subsetting is at work: more members alive than the subset. */
  limited (alive = this.alive().length) {
    return this.o.subset > 0 && alive > this.o.subset
  }

  /** A method called; returns true when it is new and the subset may have to change for it. */
  called (method) {
    if (this.methods.size >= MAX_METHODS) this.methods.clear()
    this.methods.add(method)
    return this.o.subset > 0 && this.members.size > this.o.subset
  }

  /** The members to connect to, for the methods called. */
  choose (alive = this.alive()) {
    const local = this.o.local ? new Set(alive.filter(this.o.local)) : null
    return chooseSubset({ members: alive, methods: [...this.methods], mayServe: (ep, m) => this.mayServe(ep, m), key: this.o.key, size: this.o.subset, prefer: this.prefer, avoid: this.avoid, local })
  }

  /** Whether a member not connected may serve `method` (with a `group`: subscribe to the event `method` in it, null: in any). */
  outsideMayServe (method, group) {
    for (const [ep, r] of this.members) {
      if (r.state <= MemberState.SUSPECT && this.o.table.get(ep) === undefined && this.mayServe(ep, method, group)) return true
    }
    return false
  }

  /** An event this client publishes is "called" too: the subset takes in its subscribers (as a method's servers). */
  static eventKey (event) {
    return `\0${event}`
  }

  /**
   * Whether `endpoint` serves `method`, or may: by its own word when connected, else by what a
   * peer with the same service digest said, else it is not known (true). With a `group` (or a
   * Roster.eventKey() for `method`), whether it subscribes to that event in it (null: in any).
   */
  mayServe (endpoint, method, group) {
    if (group === undefined && method.charCodeAt(0) === 0) { method = method.slice(1); group = null }
    const peer = this.o.table.get(endpoint)
    let d = peer?.service ?? null
    if (d === null) {
      const digest = this.members.get(endpoint)?.service ?? peer?.hint ?? null
      if (digest === null) return true // states nothing: an older peer, or not heard yet
      d = this.o.services.known(digest)
      if (d === undefined) return true
    }
    if (group !== undefined) {
      if (d === ANY) return false // an older peer subscribes to nothing
      return group === null ? d.groups.has(method) : d.subs.has(subscriptionKey(method, group))
    }
    if (d === ANY) return peer?.notServed?.has(method) !== true
    return d.has.has(method)
  }
}
