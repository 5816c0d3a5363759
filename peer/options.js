// Peer options: defaults, one per line with the reason, and checks.
import path from 'node:path'
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { checkOptions, int, fn, loggerOption, windowOption, bool } from '../runtime/options.js'
import { normalizeEndpoint, normalizeRemote } from '../protocol/endpoint.js'
import { invalidArgument } from '../protocol/errors.js'
import { Limits, STREAM_IDLE_MS } from '../protocol/constants.js'
import { checkValue } from '../protocol/validate.js'
import { headersProblem } from '../protocol/headers.js'
import { metaSize } from '../protocol/codec.js'
import { descriptorProblem } from '../protocol/service.js'
import { VERSION } from '../protocol/version.js'
import { resolveMembershipOptions } from './membership/config.js'
import { defaultMemoryLimit } from './memory-limit.js'
import { clockOption } from '../runtime/clock.js'
import { zmqTransport } from '../transport/index.js'
import { resolvePeerSecurity, requireLoopbackWhenPlain } from '../transport/security.js'
import { splitSeeds, dnsOption } from '../transport/dns-seeds.js'
import { subscriptionsOf } from './subscriptions.js'
import { SUBSCRIPTIONS } from '../runtime/contract.js'
import { durableOption } from '../runtime/durable-hook.js'

// Each worker thread holds a V8 isolate (tens of MB) and starts in tens of ms: far more than
// the cores buys nothing and a peer asked for a thousand never gets ready.
const MAX_THREADS = 256

export const peerDefaults = Object.freeze({
  bind: 'tcp://127.0.0.1:0', //        loopback, ephemeral port: safe to start anywhere
  maxInflight: 1024, //                 async handlers running at once before new work is answered BUSY
  // With worker threads, requests queued for them are at most this much work by the measured
  // time per request (and at most maxQueue): what a crashed peer takes with it, and what
  // waits here when another peer could run it sooner, is bounded by time.
  maxQueueMs: 100,
  // Bytes of requests taken and not yet answered, all connections together, before new ones
  // are answered BUSY: what caps a peer's memory under a burst or an attack (docs/guides/deploying.md#memory).
  maxInflightBytes: 128 * 1024 * 1024,
  drainTimeout: 10000, //               stop() waits this long for in-flight work, then closes anyway
  stopLinger: 500, //                   once closed, replies already queued may take this long to leave (ZMQ_LINGER)
  // No ZMTP pings of its own: with pings on, libzmq 4.3.5 aborts the process when a connection
  // whose inbound queue is full hangs up, which any client can do on purpose. SWIM finds
  // frozen members; a frozen client's connection stays until it closes, its queues bounded.
  heartbeatInterval: 0,
  heartbeatTimeout: 3000, //            with pings on: a connection silent this long is dropped
  maxMessageSize: Limits.maxMessageSize, // larger frames drop that connection (ZMQ_MAXMSGSIZE)
  maxDepth: Limits.maxDepth, //         deeper args are refused with INVALID_REQUEST
  maxBatch: Limits.maxBatch, //         more entries in one frame: the frame is dropped
  maxStreams: Limits.maxStreams, //     streams open at once, all connections together, before new ones are refused BUSY
  maxStreamsPerConnection: Limits.maxStreamsPerConnection, // ...and on one connection
  // A stream waiting for credit whose client said nothing for this long (no credit, no "still
  // here") has lost its client: it ends. Clients say "still here" every third of it.
  streamIdleTimeout: STREAM_IDLE_MS,
  // What a request stream's client may send ahead of the handler's reading: held against
  // maxInflightBytes while the stream is open.
  inputWindow: Object.freeze({ items: 32, bytes: 1024 * 1024 }),
  // A full collection once the peer is idle after its memory grew (peer/idle-collect.js): an
  // idle process allocates nothing, so V8 would never give a burst's buffers back.
  collectWhenIdle: true,
  // RSS the process may use (peer/memory-limit.js): past 60% of it the peer collects every
  // heap and takes less work, past 80% it closes every connection. 'cgroup': the container's
  // limit, none without one.
  memoryLimit: 'cgroup',
})

const MIN_MEMORY_LIMIT = 64 * 1024 * 1024 // below this a peer would shed its connections at start

/**
 * `flowHeader`: the request header whose value names the flow a call shares a busy peer in
 * (peer/flows.js), such as 'x-tenant'; null (the default): each connection is a flow.
 */
function flowHeaderOption (v) {
  if (v === undefined || v === null) return null
  if (typeof v !== 'string' || headersProblem({ [v]: '' }) !== null) throw invalidArgument(`flowHeader must be a request header name (lowercase letters, digits, '.', '_' or '-', such as 'x-tenant'), got ${JSON.stringify(v)}`)
  return v
}

/** Default answer to a 10/FLP request: echo the body frames. */
export function flpEcho (frames) {
  return frames
}

export function resolvePeerOptions (given) {
  const o = checkOptions('Peer options', given, {
    bind: (v) => normalizeEndpoint(v ?? peerDefaults.bind, 'bind'),
    advertise: (v) => v === undefined ? undefined : normalizeRemote(v, 'advertise'),
    seeds: (v) => splitSeeds(v),
    handlers: handlerOption,
    events: (v) => subscriptionsOf(v, 'events'),
    threads: int(undefined, 0, MAX_THREADS),
    maxQueue: int(undefined, 0, 1000000),
    maxQueueMs: int(undefined, 1, 2 ** 31 - 1), // its default below, with threads only
    resourceLimits: (v) => {
      if (v !== undefined && (v === null || typeof v !== 'object')) throw invalidArgument('resourceLimits must be an object such as { maxOldGenerationSizeMb: 256 }')
      return v
    },
    flpHandler: fn(flpEcho),
    maxInflight: int(peerDefaults.maxInflight, 1),
    maxInflightBytes: int(peerDefaults.maxInflightBytes, 1024, 2 ** 53 - 1),
    drainTimeout: int(peerDefaults.drainTimeout, 0),
    stopLinger: int(peerDefaults.stopLinger, 0, 60000),
    heartbeatInterval: int(peerDefaults.heartbeatInterval, 0, 3600000),
    heartbeatTimeout: int(peerDefaults.heartbeatTimeout, 0, 3600000),
    maxMessageSize: int(peerDefaults.maxMessageSize, 64, 2 ** 31 - 1),
    maxDepth: int(peerDefaults.maxDepth, 1, 1000),
    maxBatch: int(peerDefaults.maxBatch, 1, 65535),
    maxStreams: int(peerDefaults.maxStreams, 0, 1000000),
    maxStreamsPerConnection: int(peerDefaults.maxStreamsPerConnection, 0, 1000000),
    streamIdleTimeout: int(peerDefaults.streamIdleTimeout, 0, 2 ** 31 - 1),
    inputWindow: windowOption(peerDefaults.inputWindow),
    collectWhenIdle: bool(peerDefaults.collectWhenIdle),
    memoryLimit: memoryLimitOption,
    clock: clockOption,
    wallClock: fn(Date.now), //  ms since 1970: a restarted peer's incarnation starts above its earlier life's
    random: fn(Math.random),
    transport: transportOption,
    meta: metaObject,
    serviceVersion: serviceVersionOption,
    labels: labelsOption,
    capacity: int(undefined, 1, 2 ** 31 - 1),
    flowHeader: flowHeaderOption,
    membership: (v) => resolveMembershipOptions(v),
    security: resolvePeerSecurity,
    logger: loggerOption,
    dns: dnsOption,
    durable: durableOption, // zeromesh/jetstream's durableEvents(): its events run from a durable log, not the mesh
  })
  o.dnsSeeds = o.seeds.dns //      found by name, resolved again now and then (transport/dns-seeds.js)
  o.seeds = o.seeds.endpoints
  // Plain traffic stays on this machine unless the operator says otherwise (docs/guides/security.md).
  requireLoopbackWhenPlain(o.security, [o.bind, ...(o.advertise === undefined ? [] : [o.advertise])], 'bind',
    'Give security: { clusterKey } (zeromesh peer --cluster-key FILE.key) to run CURVE, or security: false (--insecure) to run plain on purpose.')
  if (o.security && o.bind.startsWith('inproc://')) {
    throw invalidArgument('security needs a tcp or ipc bind: inproc connections have no handshake, so CURVE cannot run on them')
  }
  // Every subscription given: the events option's, and those implement() results carry.
  o.subscriptions = [...carried(given?.handlers), ...o.events]
  if (Array.isArray(o.handlers)) {
    o.threads ??= os.availableParallelism() // a thread per core: the main thread only does I/O
    o.maxQueue ??= o.threads * 64 //           requests waiting for a thread before BUSY
    o.maxQueueMs ??= peerDefaults.maxQueueMs
    // threads: 0 runs the module on the main thread (I/O-bound handlers: no thread hop)
    if (given?.maxInflight === undefined && o.threads > 0) o.maxInflight = o.threads + o.maxQueue
  } else if (o.threads !== undefined || o.maxQueue !== undefined || o.maxQueueMs !== undefined || o.resourceLimits !== undefined) {
    throw invalidArgument('threads, maxQueue, maxQueueMs and resourceLimits need handlers given as a module URL or path (worker threads)')
  }
  return o
}

/** { listener(o), connector(o) } (transport/index.js): ZeroMQ unless a simulation gives its own. */
function transportOption (v) {
  if (v === undefined) return zmqTransport
  if (typeof v?.listener !== 'function' || typeof v?.connector !== 'function') {
    throw invalidArgument('transport must be an object with listener(options) and connector(options), as transport/memory.js gives')
  }
  return v
}

/**
 * An object of functions (run on the main thread), or several (implement()'s, one per
 * contract) merged into one; or the URL or path of a module, or an array of them (run in
 * threads): modules become an array of URLs.
 */
function handlerOption (v) {
  if (v instanceof URL || typeof v === 'string') return [moduleUrl(v)]
  if (Array.isArray(v) && v.length > 0 && v.every((x) => x !== null && typeof x === 'object' && !(x instanceof URL))) {
    const merged = {}
    for (const part of v) {
      for (const [k, f] of Object.entries(handlerObject(part))) {
        if (k in merged) throw invalidArgument(`handlers: method "${k}" is given twice`)
        merged[k] = f
      }
    }
    return merged
  }
  if (Array.isArray(v)) {
    if (v.length === 0 || v.some((x) => !(x instanceof URL) && typeof x !== 'string')) throw invalidArgument('handlers given as an array must list module URLs or paths, at least one')
    return [...new Set(v.map(moduleUrl))]
  }
  return handlerObject(v)
}

/** The subscriptions handler objects carry (implement()'s SUBSCRIPTIONS): one object, or several. */
function carried (v) {
  const parts = Array.isArray(v) ? v : [v]
  return parts.flatMap((p) => p !== null && typeof p === 'object' && !(p instanceof URL) && Array.isArray(p[SUBSCRIPTIONS]) ? p[SUBSCRIPTIONS] : [])
}

function moduleUrl (v) {
  if (v instanceof URL) return v.href
  if (/^(file|data):/.test(v)) return v
  return pathToFileURL(path.resolve(v)).href
}

function handlerObject (v) {
  if (v === undefined) return Object.create(null)
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw invalidArgument('handlers must be an object of functions, such as { echo: async (args, ctx) => args }, or the URL or path of a module to run in worker threads')
  }
  for (const [k, f] of Object.entries(v)) {
    if (typeof f !== 'function') throw invalidArgument(`handlers.${k} must be a function, got ${typeof f}`)
  }
  return v
}

/** memoryLimit: bytes (at least MIN_MEMORY_LIMIT), 0 for none, or 'cgroup' (the default): bytes, 0 for none. */
function memoryLimitOption (v) {
  if (v === undefined || v === 'cgroup') return defaultMemoryLimit()
  if (v === 0 || (Number.isInteger(v) && v >= MIN_MEMORY_LIMIT && v <= Number.MAX_SAFE_INTEGER)) return v
  throw invalidArgument(`memoryLimit must be 'cgroup' (the container's limit), 0 (none) or bytes from ${MIN_MEMORY_LIMIT} (64 MiB), got ${String(v)}`)
}

/** The service's semver version, or null. */
function serviceVersionOption (v) {
  if (v === undefined || v === null) return null
  const problem = descriptorProblem({ methods: [], version: v, labels: {}, capacity: null })
  if (problem !== null) throw invalidArgument(`serviceVersion: ${problem}`)
  return v
}

/** Labels clients select peers by ({ zone: 'a', tier: 'gold' }): only this peer states them. */
function labelsOption (v) {
  if (v === undefined) return {}
  const problem = descriptorProblem({ methods: [], version: null, labels: v, capacity: null })
  if (problem !== null) throw invalidArgument(`labels: ${problem}`)
  return { ...v }
}

function metaObject (v) {
  if (v === undefined) return {}
  if (v === null || typeof v !== 'object' || Array.isArray(v) || checkValue(v, Limits.maxMetaDepth) !== null) {
    throw invalidArgument(`meta must be a plain object of plain data nested at most ${Limits.maxMetaDepth} deep, such as { zone: "a", capacity: 4 }`)
  }
  // Gossiped in every claim about this peer, with `version` added: the wire's limit counts both.
  const size = metaSize({ version: VERSION, ...v })
  if (size > Limits.maxMetaBytes) {
    throw invalidArgument(`meta is ${size} bytes packed (with the version zeromesh adds), more than the ${Limits.maxMetaBytes} bytes other peers accept; gossip a key or a URL instead of the data`)
  }
  return v
}
