// The Client users hold (docs/reference/client.md): its API and nothing of its insides. What it
// is made of lives in a ClientCore (core.js) this object keeps private; zeromesh's own code that
// needs more than the API (its metrics, zeromesh/nest, its command line, tests and benchmarks)
// reaches it through insideOf(), which the package does not export (client/index.js leaves it
// out, and the exports map has no way to this file).
import { EventEmitter } from 'node:events'
import { ClientCore } from './core.js'
import { resolveClientOptions } from './options.js'
import { insides } from '../runtime/insides.js'

const table = insides('Client') // Client -> its ClientCore, for insideOf()

export class Client extends EventEmitter {
  #core

  /** @param {object} options  ClientOptions (index.d.ts; docs/reference/client.md) */
  constructor (options) {
    super()
    this.#core = table.keep(this, new ClientCore(options, this))
  }

  /** Sends `method(args)` to a peer and resolves with its result. */
  request (method, args, options) {
    return this.#core.request(method, args, options)
  }

  /** Sends `method(args)` to every peer that serves it: each one's reply, failure or silence (docs/reference/client.md). */
  gather (method, args, options) {
    return this.#core.gather(method, args, options)
  }

  /** Opens a stream of `method(args)`: an async iterable of its items, at once (docs/guides/streams.md). */
  stream (method, args, options) {
    return this.#core.stream(method, args, options)
  }

  /** Publishes `event`: one delivery to one peer of each subscribing group (docs/guides/events.md). */
  publish (event, payload, options) {
    return this.#core.publish(event, payload, options)
  }

  /** Delivers `event` to every peer that subscribes to it, each outcome reported (docs/guides/events.md). */
  broadcast (event, payload, options) {
    return this.#core.broadcast(event, payload, options)
  }

  /** Adds `fn`, an `async (ctx, next) => ...` middleware, to the client's chain (docs/guides/middleware.md). Returns the client. */
  use (fn) {
    this.#core.use(fn)
    return this
  }

  /** The peers this client knows, with their state as this client sees it. */
  peers () {
    return this.#core.peers()
  }

  /** Counters: requests, successes, retries, attempt timeouts, failures by code, streams, events, member lists. */
  stats () {
    return this.#core.stats()
  }

  /** A peer's view of the cluster (`from`, or a random up peer). */
  members (from) {
    return this.#core.members(from)
  }

  /** Resolves once some peer that is up serves `method`, with their endpoints. */
  waitFor (method, options) {
    return this.#core.waitFor(method, options)
  }

  /** Whether `method` is served as a stream (true), not (false), or not known yet (null). */
  streaming (method) {
    return this.#core.streaming(method)
  }

  /** A typed client of `contract` (docs/guides/contracts.md): a function per method. */
  proxy (contract, options) {
    return this.#core.proxy(contract, options)
  }

  /** @deprecated since 0.3.0: proxy(contract), the same thing. */
  service (contract, options) {
    return this.#core.service(contract, options)
  }

  /** What the peer at `endpoint` serves, asked of it. */
  describe (endpoint) {
    return this.#core.describe(endpoint)
  }

  /** A deadline of `timeout` ms (the client's timeout by default) on this client's clock: { timeout, at, left(), passed }. */
  deadline (timeout) {
    return this.#core.deadline(timeout)
  }

  /** How `method` is served: 'stream', 'request', or null when no peer serves it nor may one come. */
  howServed (method, options) {
    return this.#core.howServed(method, options)
  }

  /** The endpoints of every peer that serves `method`, as gather() reaches them. */
  serversOf (method, options) {
    return this.#core.serversOf(method, options)
  }

  /** Takes no new call and, with `drain` ms, lets the calls in flight settle first; then rejects the rest with ClosedError and closes the socket. */
  close (options) {
    return this.#core.close(options)
  }

  /** Checks Client options as the constructor does, without making a client: throws InvalidArgumentError naming the option. */
  static checkOptions (options) {
    resolveClientOptions(options)
  }
}

/** What `client` is made of (its ClientCore), for zeromesh's own code: never exported by the package. */
export const insideOf = table.insideOf

/** For zeromesh's metrics (ops/metrics.js): from now on `histogram` observes each request's whole time, retries included. */
export function observeLatency (client, histogram) {
  insideOf(client).latency = histogram
}
