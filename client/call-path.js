// The one call path: where a request's, a hedge's or a stream's next attempt goes. Two
// stages, as in Envoy: first the candidates (routing.js: up, serving the method, in the
// version range, with the labels asked for; for a stream, taking streams; not tried in this
// round; not marked busy), then the pick (a key's rendezvous hash, or the zone preference
// and then the strategy). Only the sending differs between requests and streams, so every
// kind gets the same answers: the zone kept, a fast failure when every peer refused this
// client, the DNS names resolved again when nothing is up, a wait for capacity when every
// peer is busy, an UnknownMethodError when no peer may ever take it.
import { UnknownMethodError, NoPeersError } from '../protocol/errors.js'
import { pickByKey } from './strategies/rendezvous.js'
import { allRefused, refusalError } from './refusals.js'
import { ANY } from './services.js'

/** What an attempt is: a request, a hedge (a second copy of a slow request) or a stream. */
export const Kind = Object.freeze({ REQUEST: 'request', HEDGE: 'hedge', STREAM: 'stream' })

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
   * Where the next attempt of `item` goes. `item`: { method, version, where, key, tried }
   * (a Call or a ClientStream); `tried`: the endpoints tried in this round.
   */
  route (item, kind, now) {
    const { table, router } = this.o
    if (table.up().length === 0) {
      if (kind === Kind.HEDGE) return NONE
      // Every peer refused this client at the handshake: waiting would not help.
      if (allRefused(table)) return { error: refusalError(table) }
      this.o.nothingUp()
      return PARK
    }
    const routed = router.candidates(item.method, item.version, item.where)
    if (routed.length === 0) {
      if (kind === Kind.HEDGE) return NONE
      if (this.o.mayStillRoute(item.method, item.version, item.where)) return PARK
      return { error: new UnknownMethodError(`zeromesh: ${router.explain(item.method, item.version, item.where)}`) }
    }
    let able = routed
    if (kind === Kind.STREAM) {
      able = routed.filter((p) => p.streams === true)
      if (able.length === 0) {
        if (routed.some((p) => p.service === null)) return PARK // it has not said yet what it takes
        return { error: new NoPeersError(`zeromesh: the peers serving "${item.method}" (${routed.map((p) => p.endpoint).join(', ')}) take no streams: they are older than zeromesh 0.3.0${routed.some((p) => p.service === ANY) ? ' or say nothing of what they serve' : ''}`) }
      }
    }
    let fresh = able
    if (item.tried.length > 0 || someBusy(able)) fresh = able.filter((p) => !p.busy && !item.tried.includes(p.endpoint))
    if (fresh.length === 0) {
      if (kind === Kind.HEDGE) return NONE
      return allBusy(able) ? CAPACITY : EXHAUSTED
    }
    try {
      return { peer: this.choose(item, fresh, now) }
    } catch (err) {
      const error = this.o.strategyFault(err)
      return kind === Kind.HEDGE ? NONE : { error }
    }
  }

  /**
   * A peer not marked busy that may take a waiting item now (capacity.js, when the routes
   * change): { peer }, { error } when a custom strategy threw, or null when there is none.
   */
  open (item, kind) {
    let open = this.o.router.candidates(item.method, item.version, item.where)
    open = open.filter((p) => !p.busy && (kind !== Kind.STREAM || p.streams === true))
    if (open.length === 0) return null
    try {
      return { peer: this.choose(item, open) }
    } catch (err) {
      return { error: this.o.strategyFault(err) }
    }
  }

  /** Whether `peer` may take `item` (a place freed there: capacity.js). */
  fits (item, kind, peer) {
    if (kind === Kind.STREAM && peer.streams !== true) return false
    return this.o.router.candidates(item.method, item.version, item.where).includes(peer)
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
