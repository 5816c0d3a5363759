// The one call path: where a call's next attempt goes, or its hedged copy's, whatever its
// kind. Two stages, as in Envoy: first the candidates (routing.js: up, serving the method, in
// the version range, with the labels asked for; stating the features the call's kind needs,
// such as streams; not tried in this round; not marked busy), then the pick (a key's
// rendezvous hash, or the zone preference and then the strategy). Only the sending differs
// between kinds, so every kind gets the same answers: the zone kept, a fast failure when every
// peer refused this client, the DNS names resolved again when nothing is up, a wait for
// capacity when every peer is busy, an UnknownMethodError when no peer may ever take it.
import { NoPeersError } from '../protocol/errors.js'
import { hostOf } from '../protocol/endpoint.js'
import { pickByKey } from './strategies/rendezvous.js'
import { allRefused, refusalError } from './refusals.js'
import { ANY } from './services.js'

/**
 * The decisions route() returns, each an object with one of these keys:
 *   peer      send the attempt there
 *   park      no peer that may take it is up (yet): wait until the routes change
 *   capacity  every peer that may take it answered busy: wait for a place (capacity.js)
 *   exhausted every peer that may take it refused it in this round (not busy)
 *   error     it cannot be routed: fail with this error
 *   none      a hedge with nowhere to go: no second copy
 */
const PARK = Object.freeze({ park: true })
const CAPACITY = Object.freeze({ capacity: true })
const EXHAUSTED = Object.freeze({ exhausted: true })
const NONE = Object.freeze({ none: true })

export class CallPath {
  /**
   * @param {object} o
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {import('./routing.js').Router} o.router
   * @param {import('./zone.js').ZonePreference|null} o.zones
   * @param {{ select(list, item): object }} o.strategy
   * @param {{ now(): number }} o.clock
   * @param {(method: string, version: string|null, where: object|null) => boolean} o.mayStillRoute  a peer that may take it may still come
   * @param {() => void} o.nothingUp   no peer is up: resolve the DNS names again, dial the seeds
   * @param {(err: unknown) => Error} o.strategyFault  reports a custom strategy's throw; the error to fail with
   */
  constructor (o) {
    this.o = o
  }

  /**
   * Where the next attempt of `item` goes (a Call: its method, version, where, key, kind and
   * `tried`, the endpoints tried in this round), or with `hedge` its hedged copy.
   */
  route (item, hedge, now) {
    const { table, router } = this.o
    if (table.up().length === 0) {
      if (hedge) return NONE
      // Every peer refused this client at the handshake: waiting would not help.
      if (allRefused(table)) return { error: refusalError(table) }
      this.o.nothingUp()
      return PARK
    }
    const routed = router.candidates(item.method, item.version, item.where, item.group)
    if (routed.length === 0) {
      if (hedge) return NONE
      if (item.pin !== null || item.kind.waits === true || this.o.mayStillRoute(item.method, item.version, item.where, item.group)) return PARK
      return { error: item.kind.unroutable(`zeromesh: ${router.explain(item.method, item.version, item.where, item.group)}`) }
    }
    let able = item.pin === null ? routed : routed.filter((p) => p.endpoint === item.pin)
    if (able.length === 0) {
      if (hedge) return NONE
      const pinned = table.get(item.pin)
      // Its one peer said what it takes, and that is not this: nothing to wait for.
      if (pinned !== undefined && pinned.state === 'up' && pinned.service !== null && !routedOnce(router, item, pinned)) return { error: notSubscriber(item) }
      return PARK // its one peer is not up (yet): until its deadline
    }
    const needs = item.kind.needs
    if (needs !== 0) {
      const all = able
      able = all.filter((p) => (p.features & needs) === needs)
      if (able.length === 0) {
        if (hedge) return NONE
        if (all.some((p) => p.service === null)) return PARK // it has not said yet what it takes
        return { error: new NoPeersError(`zeromesh: the peers serving "${item.method}" (${all.map((p) => p.endpoint).join(', ')}) take no ${item.kind.noun}s: they are older than zeromesh ${item.kind.since}${all.some((p) => p.service === ANY) ? ' or say nothing of what they serve' : ''}`) }
      }
    }
    let fresh = able
    if (item.tried.length > 0 || someBusy(able)) fresh = able.filter((p) => !p.busy && !item.tried.includes(p.endpoint))
    if (fresh.length === 0) {
      if (hedge) return NONE
      return allBusy(able) ? CAPACITY : EXHAUSTED
    }
    if (item.tried.length > 0 || hedge) fresh = elsewhere(answering(fresh, now ?? this.o.clock.now()), item.tried)
    try {
      return { peer: this.choose(item, fresh, now) }
    } catch (err) {
      const error = this.o.strategyFault(err)
      return hedge ? NONE : { error }
    }
  }

  /**
   * A peer not marked busy that may take a waiting item now (capacity.js, when the routes
   * change): { peer }, { error } when a custom strategy threw, or null when there is none.
   */
  open (item) {
    const needs = item.kind.needs
    let open = this.o.router.candidates(item.method, item.version, item.where, item.group)
    open = open.filter((p) => !p.busy && (p.features & needs) === needs && (item.pin === null || p.endpoint === item.pin))
    if (open.length === 0) return null
    try {
      return { peer: this.choose(item, open) }
    } catch (err) {
      return { error: this.o.strategyFault(err) }
    }
  }

  /** Whether `peer` may take `item` (a place freed there: capacity.js). */
  fits (item, peer) {
    const needs = item.kind.needs
    if ((peer.features & needs) !== needs || (item.pin !== null && peer.endpoint !== item.pin)) return false
    return this.o.router.candidates(item.method, item.version, item.where, item.group).includes(peer)
  }

  /** The peer for `item` among `candidates`: by its key, or the zone preference and then the strategy. */
  choose (item, candidates, now) {
    if (item.key !== undefined) return pickByKey(candidates, item.key)
    const { zones, strategy, clock } = this.o
    const pool = zones === null ? candidates : zones.narrow(item.method, candidates, now ?? clock.now())
    const peer = strategy.select(pool, item)
    return pool.includes(peer) ? peer : pool[0] // a custom strategy returned something else
  }
}

/** Whether any peer of `list` is marked busy (the common case, none, allocates nothing). */
function someBusy (list) {
  for (let i = 0; i < list.length; i++) if (list[i].busy) return true
  return false
}

function allBusy (list) {
  for (let i = 0; i < list.length; i++) if (!list[i].busy) return false
  return true
}

/** Whether `peer` would take `item` if it were the only one (a pinned call's peer). */
function routedOnce (router, item, peer) {
  return router.filter(item.method, item.version, item.where, item.group).includes(peer)
}

/** The error of a pinned call whose peer does not take it: marked, so its fan-out leaves the peer out (fan-out.js). */
function notSubscriber (item) {
  const err = item.kind.unroutable(`zeromesh: ${item.pin} does not subscribe to "${item.method}"`)
  err.notSubscriber = true
  return err
}

// A retry's (or a hedge's) peer is one that answers: a peer silent for this long while it
// holds calls, or since its last failure (an attempt that timed out there), may have gone
// where the first attempt went (a host blackholed, a process frozen, often several peers at
// once) and is passed over while others answer. It stays in rotation for new calls; its own
// calls' attempt limits and heartbeats judge it.
const SILENT_MS = 100

function answering (peers, now) {
  const heard = peers.filter((p) => now - p.heardAt < SILENT_MS || (p.calls.size === 0 && p.failures === 0))
  return heard.length > 0 ? heard : peers
}

// ...and one on another host than those tried, while there is one: peers of one address share
// a machine, a process or a network path, and what failed the first attempt (a host blackholed
// or starved, a process stopping) fails them together. Seen in the lab: a blackholed host's
// idempotent request used its 3 attempts on three of its 10 peers, the zone preference keeping
// the retries beside them (as Envoy's previous_hosts predicate, by address).
function elsewhere (peers, tried) {
  if (tried.length === 0) return peers
  const hosts = new Set()
  for (let i = 0; i < tried.length; i++) hosts.add(hostOf(tried[i]))
  const other = peers.filter((p) => !hosts.has(hostOf(p.endpoint)))
  return other.length > 0 ? other : peers
}
