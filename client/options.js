// Client options and per-request options: defaults, one per line with the reason, and checks.
import { headersProblem } from '../protocol/headers.js'
import { checkOptions, checkGiven, int, num, bool, any, fn, loggerOption, windowOption } from '../runtime/options.js'
import { invalidArgument } from '../protocol/errors.js'
import { Limits } from '../protocol/constants.js'
import { clockOption, MAX_TIMER_MS } from '../runtime/clock.js'
import { resolveClientSecurity, requireLoopbackWhenPlain } from '../transport/security.js'
import { splitSeeds, dnsOption } from '../transport/dns-seeds.js'
import { durableOption } from '../runtime/durable-hook.js'
import { zmqTransport } from '../transport/index.js'
import { deprecated } from '../runtime/deprecated.js'
import { versionRange, whereProblem } from '../protocol/service.js'
import { normalizeRemote } from '../protocol/endpoint.js'

export const clientDefaults = Object.freeze({
  timeout: 5000, //            whole deadline of a request, retries included
  idempotent: true, //         requests may be re-sent to another peer after a lost connection
  strategy: 'p2c', //          how a peer is picked among the healthy ones: latency-weighted power of two choices
  heartbeatInterval: 1000, //  a silent peer connection gets a PING (transport/heartbeats.js), so a frozen peer is noticed...
  heartbeatTimeout: 3000, //   ...and taken down after 3 s of silence
  maxMessageSize: Limits.maxMessageSize, // larger requests are refused before sending
  maxDepth: Limits.maxDepth, // deeper results are refused as protocol errors
  attemptTimeout: 'auto', //   an idempotent request's attempt gets this long before another peer is tried ('auto': 4x the method's latency + 50 ms)
  maxAttempts: 3, //           attempts per request at most, first included
  maxPending: 65536, //        calls (requests and streams) in this client at once, in flight or waiting for a peer's capacity; beyond, a new one is refused busy at once (backpressure, bounded memory)
  maxPendingBytes: 64 * 1024 * 1024, // the same cap in bytes: the encoded size of those calls
  retryBudget: Object.freeze({ percent: 0.2, minPerSecond: 10, windowMs: 10000 }), // retries <= 20% of requests + 10/s
  hedge: null, //              { delayMs }: send a second copy of a slow idempotent request to another peer
  ejection: Object.freeze({ after: 5, baseMs: 1000, maxMs: 4000, maxShare: 0.5 }), // out of rotation after 5 failures in a row, 1 s doubling to 4 s, at most half the peers
  discover: true, //           learn peers from the member lists of the peers it talks to
  refreshInterval: 5000, //    also fetch a member list from a random peer this often (0: never)
  membersTimeout: 1000, //     wait this long for a member list
  maxPeers: 4096, //           members known at most: a member list naming more is not taken beyond this
  subset: 32, //               peers connected at most, for all methods together, once the cluster is larger (0: every member)
  rebalanceInterval: 10000, // with subsets: how often (jittered) a client compares its peers' clients and moves one connection off a crowded peer (0: never)
  where: null, //              labels every request's peer must have ({ tier: 'gold' }); null: any peer
  zone: null, //               this client's zone: requests stay with peers labelled zone=<it> while they have capacity
  // What a stream's peer may send ahead of the reader: items and bytes in flight and waiting
  // to be read, so a slow reader holds at most about this much per stream.
  streamWindow: Object.freeze({ items: 64, bytes: 4 * 1024 * 1024 }),
})

const MAX_TIMEOUT = MAX_TIMER_MS // setTimeout's limit

export function resolveClientOptions (given) {
  const o = checkOptions('Client options', given, {
    seeds: (v) => {
      const seeds = splitSeeds(v)
      if (seeds.endpoints.length + seeds.dns.length === 0) throw invalidArgument('Client needs seeds: at least one peer endpoint, such as ["tcp://127.0.0.1:5555"], or a DNS seed, such as "dns://peers.local:5555"')
      return seeds
    },
    timeout: int(clientDefaults.timeout, 1, MAX_TIMEOUT),
    idempotent: bool(clientDefaults.idempotent),
    strategy: any(clientDefaults.strategy),
    heartbeatInterval: int(clientDefaults.heartbeatInterval, 0, 3600000),
    heartbeatTimeout: int(clientDefaults.heartbeatTimeout, 0, 3600000),
    maxMessageSize: int(clientDefaults.maxMessageSize, 64, 2 ** 31 - 1),
    maxDepth: int(clientDefaults.maxDepth, 1, 1000),
    attemptTimeout: attemptTimeoutOption(clientDefaults.attemptTimeout),
    maxAttempts: int(clientDefaults.maxAttempts, 1, 100),
    maxPending: int(clientDefaults.maxPending, 1, 2 ** 24),
    maxPendingBytes: int(clientDefaults.maxPendingBytes, 1024, 2 ** 40),
    retryBudget: (v) => {
      if (v === undefined) return clientDefaults.retryBudget
      const d = clientDefaults.retryBudget
      return checkOptions('retryBudget', v, {
        percent: num(d.percent, 0, 10),
        minPerSecond: num(d.minPerSecond, 0),
        windowMs: int(d.windowMs, 1000, 600000),
      })
    },
    hedge: hedgeOption(clientDefaults.hedge),
    ejection: (v) => {
      if (v === undefined) return clientDefaults.ejection
      const d = clientDefaults.ejection
      return checkOptions('ejection', v, {
        after: int(d.after, 1, 1000),
        baseMs: int(d.baseMs, 1, 3600000),
        maxMs: int(d.maxMs, 1, 3600000),
        maxShare: num(d.maxShare, 0, 1),
      })
    },
    discover: bool(clientDefaults.discover),
    refreshInterval: int(clientDefaults.refreshInterval, 0, MAX_TIMEOUT),
    membersTimeout: int(clientDefaults.membersTimeout, 1, MAX_TIMEOUT),
    maxPeers: int(clientDefaults.maxPeers, 1, 65535),
    subset: int(clientDefaults.subset, 0, 65535),
    rebalanceInterval: int(clientDefaults.rebalanceInterval, 0, 2 ** 31 - 1),
    where: whereOption(clientDefaults.where),
    zone: (v) => {
      if (v === undefined || v === null) return null
      if (typeof v !== 'string' || v.length === 0 || v.length > 63) throw invalidArgument('zone must be the value of the peers\' zone label, such as "eu-west-1a"')
      return v
    },
    clock: clockOption,
    wallClock: fn(Date.now), // ms since 1970, for the incarnation horizon of member-list claims
    random: fn(Math.random),
    transport: transportOption,
    security: resolveClientSecurity,
    logger: loggerOption,
    dns: dnsOption,
    durable: durableOption, // zeromesh/jetstream's durableEvents(): its events are published to a durable log, not the mesh
    streamWindow: windowOption(clientDefaults.streamWindow),
  })
  o.dnsSeeds = o.seeds.dns //      found by name, resolved again now and then (transport/dns-seeds.js)
  o.seeds = o.seeds.endpoints
  // Plain traffic stays on this machine unless the user says otherwise (docs/guides/security.md).
  requireLoopbackWhenPlain(o.security, o.seeds, 'seeds',
    'Give security: { clusterPublicKey, secretKey } (--cluster-pub FILE.pub --key FILE.key) to run CURVE, or security: false (--insecure) to run plain on purpose.')
  return o
}

/**
 * A checker of per-request options against the client's defaults. A request without options
 * gets one shared frozen object, so the common call allocates nothing here.
 */
export function requestOptionsChecker (defaults) {
  const spec = {
    timeout: int(defaults.timeout, 1, MAX_TIMEOUT),
    idempotent: bool(defaults.idempotent),
    attemptTimeout: attemptTimeoutOption(defaults.attemptTimeout),
    hedge: hedgeOption(defaults.hedge),
    signal: (v) => {
      if (v !== undefined && !(v instanceof AbortSignal)) throw invalidArgument('signal must be an AbortSignal')
      return v
    },
    key: (v) => {
      if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.length > 1024)) throw invalidArgument('key must be a string of 1 to 1024 characters, such as a user or session id')
      return v
    },
    version: (v) => {
      const range = versionRange(v)
      if (range === undefined) throw invalidArgument(`version must be a semver range such as '^2', '~2.1' or '>=1.2 <3', got ${JSON.stringify(v)}`)
      return range
    },
    where: whereOption(defaults.where),
    endpoint: (v, name) => v === undefined || v === null ? null : normalizeRemote(v, name), // the one peer it may go to
    values: bool(false),
    headers: (v, name) => {
      if (v === undefined || v === null) return null
      const problem = headersProblem(v)
      if (problem !== null) throw invalidArgument(`${name}: ${problem}`)
      return Object.keys(v).length === 0 ? null : Object.freeze({ ...v })
    },
  }
  // what each checker makes of undefined: the options of a call that gives none, and the base of one that gives some
  const none = Object.freeze({ ...Object.fromEntries(Object.entries(spec).map(([k, check]) => [k, check(undefined, k)])) })
  return (given) => given === undefined ? none : checkGiven('request options', given, spec, none)
}

/**
 * A checker of client.stream() options. `timeout` bounds the whole stream (0, the default:
 * none, for feeds); `idleTimeout` the wait for the first item and between items (the
 * client's timeout by default; 0: none).
 */
export function streamOptionsChecker (defaults) {
  const request = requestOptionsChecker(defaults)
  return (given) => {
    const { timeout, idleTimeout, window, input, ...rest } = given ?? {}
    if (rest.hedge !== undefined) throw invalidArgument('streams are never hedged: leave out hedge')
    if (rest.attemptTimeout !== undefined) throw invalidArgument('a stream has no attemptTimeout: give idleTimeout, the longest wait for an item')
    if (rest.values !== undefined) throw invalidArgument('a stream\'s items are its values: leave out values (a request\'s option)')
    const o = { ...request(rest) }
    o.timeout = int(0, 0, MAX_TIMEOUT)(timeout, 'timeout')
    o.idleTimeout = int(defaults.timeout, 0, MAX_TIMEOUT)(idleTimeout, 'idleTimeout')
    o.window = windowOption(defaults.streamWindow)(window, 'window')
    if (input !== undefined && (input === null || (typeof input[Symbol.asyncIterator] !== 'function' && typeof input[Symbol.iterator] !== 'function') || typeof input === 'string')) {
      throw invalidArgument('input must be an iterable or async iterable of items (an array, a generator, a Readable)')
    }
    o.input = input ?? null
    return o
  }
}

/**
 * A checker of client.publish() options (`broadcast`: client.broadcast()'s): a request's
 * (timeout, idempotent, attemptTimeout, signal, key, version, where, headers; never hedged),
 * and `groups` (a publish only: the groups that must each get it) and `ack` (false: resolve
 * once sent, nothing acknowledged).
 */
export function eventOptionsChecker (defaults, broadcast) {
  const request = requestOptionsChecker(defaults)
  const name = broadcast ? 'broadcast' : 'publish'
  const none = Object.freeze({ ...request(undefined), hedge: null, ack: true, groups: null })
  return (given) => {
    if (given === undefined) return none
    const { groups, ack, ...rest } = given ?? {}
    if (rest.hedge !== undefined) throw invalidArgument(`${name}: events are never hedged: leave out hedge`)
    if (rest.values !== undefined) throw invalidArgument(`${name}: an event has no result: leave out values (a request's option)`)
    if (rest.endpoint !== undefined) throw invalidArgument(`${name}: an event goes to its subscribers: leave out endpoint (a request's and a stream's option)`)
    if (broadcast && groups !== undefined) throw invalidArgument('broadcast reaches every subscriber in every group: leave out groups (publish takes them)')
    if (broadcast && rest.key !== undefined) throw invalidArgument('broadcast reaches every subscriber: leave out key')
    const o = { ...request(rest), hedge: null }
    if (ack !== undefined && typeof ack !== 'boolean') throw invalidArgument(`${name}: ack must be true or false`)
    o.ack = ack ?? true
    o.groups = null
    if (groups !== undefined) {
      if (!Array.isArray(groups) || groups.length === 0 || groups.length > Limits.maxSubscriptions || groups.some((g) => typeof g !== 'string' || g.length === 0 || g.length > Limits.maxEventLength) || new Set(groups).size !== groups.length) {
        throw invalidArgument(`publish: groups must list the groups that must each get the event, each once, as ['billing', 'shipping'], got ${JSON.stringify(groups)}`)
      }
      o.groups = [...groups]
    }
    return o
  }
}

/** A label selector ({ zone: 'a' }): null when left out or empty. */
function whereOption (def) {
  return (v, name) => {
    if (v === undefined) return def
    if (v === null) return null
    const problem = whereProblem(v)
    if (problem !== null) throw invalidArgument(`${name}: ${problem}`)
    return Object.keys(v).length === 0 ? null : Object.freeze({ ...v })
  }
}

function attemptTimeoutOption (def) {
  return (v, name) => {
    if (v === undefined) return def
    if (v === 'auto') return v
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_TIMEOUT) throw invalidArgument(`${name} must be 'auto' or a whole number of milliseconds from 1 to ${MAX_TIMEOUT}, got ${String(v)}`)
    return v
  }
}

function hedgeOption (def) {
  return (v, name) => {
    if (v === undefined) return def
    if (v === null) return null
    if (typeof v !== 'object' || !Number.isInteger(v.delayMs) || v.delayMs < 1 || Object.keys(v).some((k) => k !== 'delayMs')) {
      throw invalidArgument(`${name} must be null or { delayMs } with a whole number of milliseconds >= 1`)
    }
    return v
  }
}

/**
 * The sockets, in the shape Peer's option takes (transport/index.js): { connector(o) } is
 * enough for a client, so a Peer's transport object fits as it is; ZeroMQ by default. The
 * connector function alone (before 0.3) still works for a release, with a deprecation warning.
 */
function transportOption (v) {
  if (v === undefined) return zmqTransport.connector
  if (typeof v?.connector === 'function') return (o) => v.connector(o)
  if (typeof v !== 'function') throw invalidArgument('transport must be an object with connector(options), as Peer\'s transport option and zeromesh/testing\'s MemoryNetwork hosts give')
  deprecated('ZEROMESH_DEP_CLIENT_TRANSPORT', 'Client option transport as a function is deprecated: give { connector(options) } (the shape Peer takes, e.g. zmqTransport or a MemoryNetwork host\'s transport)')
  return v
}
