// The Peer users hold (docs/reference/peer.md): its API and nothing of its insides. What it
// is made of lives in a PeerCore (core.js) this object keeps private; zeromesh's own code that
// needs more than the API (its metrics, its command line, its tests and benchmarks) reaches it
// through insideOf(), which the package does not export (peer/index.js leaves it out, and the
// exports map has no way to this file).
import { EventEmitter } from 'node:events'
import { PeerCore } from './core.js'
import { insides } from '../runtime/insides.js'

const table = insides('Peer') // Peer -> its PeerCore, for insideOf()

export class Peer extends EventEmitter {
  #core

  /** @param {object} [options]  PeerOptions (index.d.ts; docs/reference/peer.md) */
  constructor (options) {
    super()
    this.#core = table.keep(this, new PeerCore(options, this))
  }

  /** Binds the socket. Resolves with the endpoint once requests can be served; joining goes on in the background. */
  start () {
    return this.#core.start()
  }

  /**
   * Graceful stop: the leave is announced to every member (shown as `left` at once), new
   * requests are answered DRAINING (the client goes elsewhere at once), in-flight requests
   * finish (up to drainTimeout), their replies leave, the sockets close.
   */
  stop () {
    return this.#core.stop()
  }

  /** The endpoint clients and other peers use to reach this peer (set once started). */
  get endpoint () {
    return this.#core.endpoint
  }

  /** 'new', 'starting', 'running', 'stopping' or 'stopped'. */
  get state () {
    return this.#core.state
  }

  /** Joined the cluster (or has no seeds) and serving; false from the moment it drains. */
  get ready () {
    return this.#core.ready
  }

  /** Counters of what this peer received, answered and dropped. */
  stats () {
    return this.#core.stats()
  }

  /** This peer's view of the cluster, itself included: [{ endpoint, state, incarnation, meta }]. */
  members () {
    return this.#core.members()
  }

  /** What this peer serves: { methods, version, labels, capacity, contracts, events, streams, digest }. */
  service () {
    return this.#core.service()
  }

  /** Adds `fn`, an `async (ctx, next) => ...` middleware, to the peer's chain (docs/guides/middleware.md). Returns the peer. */
  use (fn) {
    this.#core.use(fn)
    return this
  }

  /** Serves `method` with `fn` from now on (or replaces its handler); clients learn it within a member-list refresh. */
  serve (method, fn) {
    this.#core.serve(method, fn)
  }

  /** Stops serving `method` (requests already running finish); returns whether it was served. */
  unserve (method) {
    return this.#core.unserve(method)
  }

  /** Subscribes `handler` to `event` in `group` (the event's name by default): docs/guides/events.md. */
  subscribe (event, handler, options) {
    this.#core.subscribe(event, handler, options)
  }

  /** Ends the subscription of `event` in `group` (the event's name by default): returns whether there was one. */
  unsubscribe (event, options) {
    return this.#core.unsubscribe(event, options)
  }

  /** Publishes `event` from this peer, as client.publish() does. */
  publish (event, payload, options) {
    return this.#core.publish(event, payload, options)
  }

  /** Broadcasts `event` from this peer, as client.broadcast() does. */
  broadcast (event, payload, options) {
    return this.#core.broadcast(event, payload, options)
  }

  /** Reads the allow-list again and lets in exactly its keys from now on: resolves with { keys }. */
  reloadAllowList () {
    return this.#core.reloadAllowList()
  }
}

/** What `peer` is made of (its PeerCore), for zeromesh's own code: never exported by the package. */
export const insideOf = table.insideOf

/** For zeromesh's metrics (ops/metrics.js): from now on `histogram` observes each request's time from arrival to reply. */
export function observeLatency (peer, histogram) {
  insideOf(peer).latency = histogram
}

/** For zeromesh's live view (ops/view.js): the histogram the metrics gave the peer (observeLatency). */
export function latencyOf (peer) {
  return insideOf(peer).latency
}

/** For zeromesh's metrics: the counts of each method served, by name: Map(method -> { requests, ok, errors }). */
/** The requests a peer runs or queues at once before it answers BUSY (its `maxInflight`), for ops/metrics.js. */
export function maxInflightOf (peer) {
  return insideOf(peer).options.maxInflight
}

export function methodCounts (peer) {
  return insideOf(peer).dispatcher?.byMethod ?? NO_COUNTS
}

const NO_COUNTS = new Map()
