// Routing, the first stage of balancing (as in Envoy): which peers may take a request at all.
// A peer is a candidate when it is up, serves the method (by its own word: services.js), has
// a version in the request's range and the labels its selector asks for; when every such
// peer is ejected, the ejected ones are (a panic threshold per method). The strategy then
// picks among the candidates and never learns about services; zone preference (zone.js)
// narrows the candidates before it does.
//
// Candidate lists are cached per method (and version range and selector), rebuilt only when a
// peer changes state or says it serves something else (the table's generation moved).
import { ANY } from './services.js'
import { versionMatches, labelsMatch } from '../protocol/service.js'
import { subscriptionKey } from '../protocol/events.js'

/**
 * Whether `peer` serves `method`, by what it said (an older peer: unless it answered
 * UNKNOWN_METHOD for it); with a `group`, whether it subscribes to the event `method` in that
 * group (null: in any group). An older peer subscribes to nothing.
 */
export function serves (peer, method, group) {
  const s = peer.service
  if (s === null) return false
  if (group !== undefined) return subscribes(s, method, group)
  if (peer.notServed !== null && peer.notServed.has(method)) return false
  return s === ANY || s.has.has(method)
}

/** Whether descriptor `s` subscribes to `event` in `group` (null: in any group). */
function subscribes (s, event, group) {
  if (s === ANY) return false
  return group === null ? s.groups.has(event) : s.subs.has(subscriptionKey(event, group))
}

/** Whether a descriptor matches a request's version range and label selector (null: any). */
export function selected (s, version, where) {
  if (s === ANY) return version === null && where === null // an older peer states neither
  if (version !== null && !versionMatches(version, s.version)) return false
  return where === null || labelsMatch(where, s.labels)
}

const whereKeys = new WeakMap() // selector -> its key (selectors are frozen: client/options.js)

/** A selector as text, the same for equal selectors whatever the order of their keys. */
function whereKey (where) {
  if (where === null) return ''
  let k = whereKeys.get(where)
  if (k === undefined) whereKeys.set(where, k = Object.keys(where).sort().map((x) => `${x}=${where[x]}`).join(','))
  return k
}

export class Router {
  /** @param {import('./peer-table.js').PeerTable} table */
  constructor (table) {
    this.table = table
    this.gen = -1 //         the table's generation the cache was made in
    this.cache = new Map() // method (with version and selector) -> { gen, list }
    this.byGroup = new Map() // event -> group (null: any) -> { gen, list }: an event's candidates
  }

  /**
   * Up peers that may take `method` with this version range and selector (null: none given);
   * with a `group`, those that subscribe to the event `method` in it (null: in any group).
   */
  candidates (method, version, where, group) {
    const gen = this.table.gen
    if (gen !== this.gen) {
      this.gen = gen
      if (this.cache.size > 1024) this.cache.clear() // bounded: callers choose method names
    }
    if (version === null && where === null && group !== undefined) return this.forGroup(method, group, gen)
    const key = version === null && where === null && group === undefined ? method : `${method}\0${version ?? ''}\0${whereKey(where)}\0${group === undefined ? '\u0001' : group ?? '\u0002'}`
    let c = this.cache.get(key)
    if (c === undefined || c.gen !== gen) this.cache.set(key, c = { gen, list: this.filter(method, version, where, group) })
    return c.list
  }

  /** candidates() of an event in a group (null: any), with no version or selector: the usual publish, looked up without making a key. */
  forGroup (event, group, gen) {
    let groups = this.byGroup.get(event)
    if (groups === undefined) {
      if (this.byGroup.size > 1024) this.byGroup.clear() // bounded: callers choose event names
      this.byGroup.set(event, groups = new Map())
    }
    let c = groups.get(group)
    if (c === undefined || c.gen !== gen) groups.set(group, c = { gen, list: this.filter(event, null, null, group) })
    return c.list
  }

  filter (method, version, where, group) {
    const out = []
    for (const p of this.table.up()) if (serves(p, method, group) && selected(p.service, version, where)) out.push(p)
    if (out.length > 0) return out
    // A panic threshold per method, as Envoy has one per cluster: when every peer that may
    // take it is ejected, it goes to them rather than to none. The ejector's own threshold
    // counts every peer up, and a method's servers may be few of them (ejection.js).
    for (const p of this.table.entries.values()) if (p.state === 'ejected' && serves(p, method, group) && selected(p.service, version, where)) out.push(p)
    return out
  }

  /**
   * Whether some peer known but not a candidate now may still take `method`: its service is
   * not known yet (unless a peer with the same digest said it does not serve it), or it serves
   * it and is down or ejected for now. `known(digest)` gives a descriptor some peer stated.
   */
  mayCome (method, version, where, known, group) {
    for (const p of this.table.entries.values()) {
      if (p.service === null) {
        const hinted = p.hint === null ? undefined : known(p.hint)
        if (hinted === undefined || ((group === undefined ? hinted.has.has(method) : subscribes(hinted, method, group)) && selected(hinted, version, where))) return true
      } else if (p.state !== 'up' && p.state !== 'draining' && serves(p, method, group) && selected(p.service, version, where)) {
        return true
      }
    }
    return false
  }

  /** Why no peer can take `method` (with a `group`: the event `method`), for the error's message. */
  explain (method, version, where, group) {
    if (group !== undefined) {
      const groups = new Set()
      for (const p of this.table.entries.values()) for (const g of (p.service !== null && p.service !== ANY ? p.service.groups.get(method) : null) ?? []) groups.add(g)
      const which = group === null ? '' : ` in group "${group}"`
      return `no peer subscribes to "${method}"${which}${groups.size === 0 ? '' : `; the peers known subscribe to it in ${[...groups].sort().join(', ')}`}`
    }
    const methods = new Set()
    const versions = new Set()
    let servers = 0
    for (const p of this.table.entries.values()) {
      if (p.service === null || p.service === ANY) continue
      for (const m of p.service.methods) if (methods.size < 21) methods.add(m)
      if (serves(p, method)) { servers++; if (p.service.version !== null) versions.add(p.service.version) }
    }
    const listed = [...methods].sort()
    const served = listed.length === 0 ? 'nothing' : listed.length > 20 ? `${listed.slice(0, 20).join(', ')}, ...` : listed.join(', ')
    if (servers === 0) return `no peer serves "${method}"; the peers known serve ${served}`
    const wanted = [version === null ? null : `version ${version}`, where === null ? null : `labels ${JSON.stringify(where)}`].filter(Boolean).join(' and ')
    return `no peer serving "${method}" matches ${wanted} (versions served: ${versions.size === 0 ? 'none stated' : [...versions].join(', ')})`
  }
}
