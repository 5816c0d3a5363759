#!/bin/sh
':' //; exec env MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-32768}" MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}" node "$0" "$@"
// ^ Run as a command (npx zeromesh, node_modules/.bin/zeromesh), the line above is sh: it
// starts node with glibc's allocator told to give memory back (docs/guides/deploying.md#memory): buffers of
// 32 KiB and more mapped on their own and unmapped when freed, free memory at the top of the
// heap returned past 128 KiB, two arenas. Values already in the environment are kept. Run as
// `node bin/zeromesh.js`, it is a string and a comment, and those settings are yours to set.
// The zeromesh command line. Results go to stdout, logs and errors to stderr.
import path from 'node:path'
import process from 'node:process'
import { Peer, Client } from '../index.js'
import { readKeyFile, keyText, writeKeyPair } from '../transport/keys.js'
import { VERSION } from '../protocol/version.js'
import { USAGE } from './usage.js'
import { UsageError, parse, sizeOption, wholeOption, fromEnvironment, httpOption, unknownEnvironment } from './args.js'
import { InvalidArgumentError, invalidArgument } from '../protocol/errors.js'
import { adviseAllocatorOnce, ALLOCATOR_SETTINGS } from '../peer/allocator-advice.js'

async function main (argv) {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE.main + '\n')
    return 0
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  if (command === undefined) throw new UsageError(`a command is needed\n\n${USAGE.main}`)
  if (command === 'peer') return runPeer(rest)
  if (command === 'request') return runRequest(rest)
  if (command === 'members') return runMembers(rest)
  if (command === 'describe') return runDescribe(rest)
  if (command === 'publish' || command === 'broadcast') return runEvent(command, rest)
  if (command === 'demo') return runDemoCommand(rest)
  if (command === 'bench') return runBenchCommand(rest)
  if (command === 'keygen') return runKeygen(rest)
  throw new UsageError(`unknown command "${command}"\n\n${USAGE.main}`)
}

const env = process.env
const SECURITY_PEER_FLAGS = { 'cluster-key': { type: 'string' }, allow: { type: 'string' }, insecure: { type: 'boolean' }, 'max-connections': { type: 'string' }, 'max-connections-per-address': { type: 'string' }, 'handshakes-per-second': { type: 'string' } }
const CAP_FLAGS = { maxConnections: 'max-connections', maxConnectionsPerAddress: 'max-connections-per-address', handshakesPerSecond: 'handshakes-per-second' }
const SECURITY_CLIENT_FLAGS = { 'cluster-pub': { type: 'string' }, key: { type: 'string' }, insecure: { type: 'boolean' } }

/** A peer's `security` from --cluster-key, --allow, --insecure (or the environment). */
function peerSecurity (values, usage) {
  const clusterKey = values['cluster-key'] !== undefined
    ? readKeyFile(values['cluster-key'], 'secret', '--cluster-key')
    : env.ZEROMESH_CLUSTER_KEY === undefined ? undefined : keyText(env.ZEROMESH_CLUSTER_KEY, 'secret', 'ZEROMESH_CLUSTER_KEY')
  const allow = values.allow ?? env.ZEROMESH_ALLOW
  if (values.insecure) {
    if (values['cluster-key'] !== undefined || values.allow !== undefined) throw new UsageError(`--insecure runs plain: it goes with neither --cluster-key nor --allow\n\n${usage}`)
    return false
  }
  const caps = {}
  for (const [key, flag] of Object.entries(CAP_FLAGS)) {
    if (values[flag] === undefined) continue
    if (clusterKey === undefined) throw new UsageError(`--${flag} needs --cluster-key: the caps are checked at CURVE handshakes\n\n${usage}`)
    caps[key] = wholeOption(values[flag], flag, usage)
  }
  if (clusterKey === undefined) {
    if (allow !== undefined) throw new UsageError(`--allow needs --cluster-key: the allow-list is checked at CURVE handshakes\n\n${usage}`)
    return undefined
  }
  return { clusterKey, allow, ...caps }
}

/** A client's `security` from --cluster-pub, --key, --insecure (or the environment). */
function clientSecurity (values, usage) {
  if (values.insecure) {
    if (values['cluster-pub'] !== undefined || values.key !== undefined) throw new UsageError(`--insecure runs plain: it goes with neither --cluster-pub nor --key\n\n${usage}`)
    return false
  }
  const clusterPublicKey = values['cluster-pub'] !== undefined
    ? readKeyFile(values['cluster-pub'], 'public', '--cluster-pub')
    : env.ZEROMESH_CLUSTER_PUB === undefined ? undefined : keyText(env.ZEROMESH_CLUSTER_PUB, 'public', 'ZEROMESH_CLUSTER_PUB')
  const secretKey = values.key !== undefined
    ? readKeyFile(values.key, 'secret', '--key')
    : env.ZEROMESH_KEY === undefined ? undefined : keyText(env.ZEROMESH_KEY, 'secret', 'ZEROMESH_KEY')
  if (clusterPublicKey === undefined && secretKey === undefined) return undefined
  if (clusterPublicKey === undefined || secretKey === undefined) throw new UsageError(`a secured client needs both --cluster-pub (the cluster's PREFIX.pub) and --key (its own PREFIX.key)\n\n${usage}`)
  return { clusterPublicKey, secretKey }
}

function runKeygen (args) {
  const { values, positionals } = parse(args, {}, USAGE.keygen, true)
  if (values.help) { process.stdout.write(USAGE.keygen + '\n'); return 0 }
  if (positionals.length !== 1) throw new UsageError(`give one PREFIX, such as keys/cluster\n\n${USAGE.keygen}`)
  const k = writeKeyPair(positionals[0])
  log(`wrote ${k.secretFile} (secret key, mode 0600: keep it private) and ${k.publicFile} (public key)`)
  process.stdout.write(k.publicKey + '\n')
  return 0
}

const PEER_FLAGS = {
  bind: { type: 'string' },
  advertise: { type: 'string' },
  seeds: { type: 'string' },
  handlers: { type: 'string' },
  'demo-handlers': { type: 'boolean' },
  'drain-timeout': { type: 'string' },
  meta: { type: 'string' },
  labels: { type: 'string' },
  'service-version': { type: 'string' },
  capacity: { type: 'string' },
  threads: { type: 'string' },
  'max-queue': { type: 'string' },
  'flow-header': { type: 'string' },
  'max-inflight-bytes': { type: 'string' },
  'memory-limit': { type: 'string' },
  http: { type: 'string' },
  'http-view': { type: 'string' },
  'log-level': { type: 'string' },
  'dns-servers': { type: 'string' },
  ...SECURITY_PEER_FLAGS,
}

// Every flag a ZEROMESH_* variable can stand for (zeromesh peer's, and the client keys that
// request, members and bench read): the one list an unknown variable is checked against.
const ALL_FLAGS = [...Object.keys(PEER_FLAGS), ...Object.keys(SECURITY_CLIENT_FLAGS)]

async function runPeer (args) {
  const { values: given } = parse(args, PEER_FLAGS, USAGE.peer)
  if (given.help) { process.stdout.write(USAGE.peer + '\n'); return 0 }
  const values = fromEnvironment(given, PEER_FLAGS, USAGE.peer)
  const { cliLogger } = await import('../ops/logger.js')
  let logger
  try {
    logger = cliLogger({ level: values['log-level'] ?? 'info' })
  } catch (err) {
    throw new UsageError(`--log-level: ${err.message.replace(/^zeromesh: /, '')}\n\n${USAGE.peer}`)
  }
  // The signals are handled before anything binds: a SIGTERM during start-up stops the peer
  // once it is up, gracefully, instead of killing it half-started.
  const shutdown = shutdownSignals(logger)
  for (const [name, near] of unknownEnvironment(ALL_FLAGS)) {
    logger.warn({ variable: name, meant: near }, `unknown environment variable ${name}${near === null ? '' : `: did you mean ${near}?`} (ignored)`)
  }
  // Handlers run in a pool of worker threads; the main thread does I/O and gossip. Without
  // --handlers a peer serves nothing (a member all the same): the demo's handlers, which burn
  // CPU and sleep on request, only with --demo-handlers.
  if (values['demo-handlers'] && values.handlers !== undefined) throw new UsageError(`--demo-handlers goes without --handlers: the demo handlers are a module of their own (demo/handlers.js), which --handlers can list beside yours\n\n${USAGE.peer}`)
  const handlers = values['demo-handlers']
    ? [new URL('../demo/handlers.js', import.meta.url)]
    : values.handlers === undefined
      ? undefined
      : (values.handlers.startsWith('data:') ? [values.handlers] : values.handlers.split(',').map((x) => x.trim()).filter(Boolean)) // a data: URL has commas of its own
          .map((h) => /^[a-z]+:/i.test(h) ? h : path.resolve(h))
  let meta
  if (values.meta !== undefined) {
    try { meta = JSON.parse(values.meta) } catch (err) { throw new UsageError(`--meta is not valid JSON: ${err.message}`) }
  }
  const ops = httpOption(values.http, values['http-view'], USAGE.peer)
  const peer = new Peer({
    meta,
    labels: labelsOption(values.labels, '--labels', USAGE.peer),
    serviceVersion: values['service-version'],
    capacity: values.capacity === undefined ? undefined : wholeOption(values.capacity, 'capacity', USAGE.peer),
    bind: values.bind,
    advertise: values.advertise,
    seeds: values.seeds,
    handlers,
    threads: wholeOption(values.threads, 'threads', USAGE.peer),
    maxQueue: wholeOption(values['max-queue'], 'max-queue', USAGE.peer),
    flowHeader: values['flow-header'],
    maxInflightBytes: values['max-inflight-bytes'] === undefined ? undefined : sizeOption(values['max-inflight-bytes'], 'max-inflight-bytes', USAGE.peer),
    drainTimeout: wholeOption(values['drain-timeout'], 'drain-timeout', USAGE.peer, ' of milliseconds'),
    memoryLimit: values['memory-limit'] === undefined || values['memory-limit'] === 'cgroup' ? values['memory-limit'] : sizeOption(values['memory-limit'], 'memory-limit', USAGE.peer),
    security: peerSecurity(values, USAGE.peer),
    logger,
    dns: values['dns-servers'] === undefined ? undefined : { servers: values['dns-servers'].split(',').map((x) => x.trim()).filter(Boolean) },
  })
  // Its options are good. Run as `node bin/zeromesh.js`, the sh header's allocator settings
  // are not there: said in the log, and the peer then says nothing of it itself
  // (peer/allocator-advice.js).
  adviseAllocatorOnce((advice) => logger.warn({ settings: ALLOCATOR_SETTINGS }, advice.replace(/^zeromesh: /, '')))
  // The operations endpoint opens first: a port in use fails here, before the peer binds or
  // joins, rather than leaving a peer in the cluster without its endpoint.
  let opsServer = null
  if (ops !== null) {
    const [{ peerMetrics }, { startOpsServer }, { ClusterView }] = await Promise.all([import('../ops/metrics.js'), import('../ops/http.js'), import('../ops/view.js')])
    const registry = peerMetrics(peer)
    // What other members serve, for the view: a client of the cluster asks them, while the page
    // is open (in a secured cluster this peer has no client key: only its own service shows).
    const watch = peer.options.security ? null : () => {
      const c = new Client({ seeds: [peer.endpoint] })
      return { services: () => new Map(c.peers().map((p) => [p.endpoint, p.service])), close: () => c.close() }
    }
    const view = ops.view ? new ClusterView(peer, peer.latency, { watch }) : null
    try {
      opsServer = await startOpsServer({ host: ops.host, port: ops.port, registry, ready: () => peer.ready, view })
    } catch (err) {
      const why = err?.code === 'EADDRINUSE' ? 'address in use' : err?.code === 'EACCES' ? 'permission denied' : err?.code === 'EADDRNOTAVAIL' ? 'no such local address' : (err?.message ?? String(err))
      throw invalidArgument(`cannot listen on --http ${ops.host}:${ops.port}: ${why}`)
    }
  }
  let endpoint
  try {
    endpoint = await peer.start()
  } catch (err) {
    await opsServer?.close()
    throw err
  }
  process.stdout.write(endpoint + '\n')
  if (handlers === undefined) logger.warn({ methods: [] }, 'serves no methods: give --handlers MODULE (or --demo-handlers for the demo\'s echo, whoami, spin, sleep and count)')
  if (opsServer !== null) logger.info({ http: `${ops.host}:${opsServer.port}`, view: ops.view }, `operations endpoint on http://${ops.host.includes(':') ? `[${ops.host}]` : ops.host}:${opsServer.port} (/metrics, /healthz, /readyz${ops.view ? ', and the live view at /' : ''})`)
  // Under a supervisor that waits for it (pm2's wait_ready), "ready" once the peer joined.
  if (typeof process.send === 'function') {
    const ready = () => { try { process.send('ready') } catch { /* the channel closed */ } }
    if (peer.ready) ready()
    else peer.once('joined', ready)
  }
  const sec = peer.options.security
  process.on('SIGHUP', () => {
    if (!sec) { logger.warn({}, 'SIGHUP: not secured, no allow-list to read'); return }
    peer.reloadAllowList().catch(() => {}) // the peer logs the outcome
  })
  const code = await new Promise((resolve) => {
    shutdown.then(() => peer.stop().then(() => resolve(0), (err) => { logger.error({ err: err.message }, `stop failed: ${err.message}`); resolve(1) }))
    // No handler thread can be started any more: the peer has left the cluster and stops;
    // exit 1 so a supervisor (pm2, systemd, Kubernetes) starts a fresh process.
    peer.on('unhealthy', () => { peer.stop().then(() => resolve(1), () => resolve(1)) })
  })
  await opsServer?.close()
  // The process ends once ZeroMQ has sent the last replies (up to the socket's linger), unless
  // something else holds it open: a supervisor's IPC channel (pm2 listens for messages in
  // the process it runs) is let go, and anything else (a handler module's timer) is cut
  // short once the linger is over.
  if (process.connected) process.disconnect()
  setTimeout(() => process.exit(code), peer.options.stopLinger + 500).unref()
  return code
}


const REPEAT_TERM_MS = 1000 // a SIGTERM this soon after the first is the same request again

/**
 * SIGTERM and SIGINT, handled from now on: the first starts the drain (the returned promise
 * resolves with its name). Another SIGINT exits at once (Ctrl-C twice on a terminal); another
 * SIGTERM exits at once only when it comes 1 s or more after the first, since `timeout` and
 * some supervisors signal the process and its group together, and two must not skip the drain.
 */
function shutdownSignals (logger) {
  let first = null
  let at = 0
  return new Promise((resolve) => {
    const onSignal = (sig) => {
      if (first !== null) {
        if (sig === 'SIGTERM' && Date.now() - at < REPEAT_TERM_MS) {
          logger.warn({ signal: sig }, 'SIGTERM again within 1 s of the first: ignored (the drain goes on)')
          return
        }
        logger.warn({ signal: sig }, `${sig} again: exiting now`)
        process.exit(130)
      }
      first = sig
      at = Date.now()
      logger.info({ signal: sig }, `${sig}: draining`)
      resolve(sig)
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}

/** KEY=VALUE,KEY=VALUE as an object (--labels, --where), or undefined. */
function labelsOption (v, flag, usage) {
  if (v === undefined) return undefined
  const out = {}
  for (const pair of v.split(',').map((x) => x.trim()).filter(Boolean)) {
    const i = pair.indexOf('=')
    if (i <= 0) throw new UsageError(`${flag} takes KEY=VALUE pairs, comma-separated, such as zone=a,tier=gold; got "${pair}"\n\n${usage}`)
    out[pair.slice(0, i)] = pair.slice(i + 1)
  }
  return out
}

async function runRequest (args) {
  const { values, positionals } = parse(args, {
    seeds: { type: 'string' },
    timeout: { type: 'string' },
    'no-idempotent': { type: 'boolean' },
    stream: { type: 'boolean' },
    version: { type: 'string' },
    where: { type: 'string' },
    ...SECURITY_CLIENT_FLAGS,
  }, USAGE.request, true)
  if (values.help) { process.stdout.write(USAGE.request + '\n'); return 0 }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${USAGE.request}`)
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError(`give METHOD and at most one JSON-ARGS\n\n${USAGE.request}`)
  const [method, json] = positionals
  let params
  if (json !== undefined) {
    try { params = JSON.parse(json) } catch (err) { throw new UsageError(`JSON-ARGS is not valid JSON: ${err.message}`) }
  }
  // Every flag is checked before the client exists: a usage error must not leave it open.
  const timeout = wholeOption(values.timeout, 'timeout', USAGE.request, ' of milliseconds')
  const options = { idempotent: values['no-idempotent'] ? false : undefined, version: values.version, where: labelsOption(values.where, '--where', USAGE.request) }
  const client = new Client({ seeds: values.seeds, security: clientSecurity(values, USAGE.request) })
  try {
    if (values.stream) {
      // Each item as it comes, one JSON line each; --timeout is the longest wait for an item.
      for await (const item of client.stream(method, params, { ...options, idleTimeout: timeout })) {
        if (!process.stdout.write(JSON.stringify(item ?? null) + '\n')) await new Promise((resolve) => process.stdout.once('drain', resolve))
      }
      return 0
    }
    const result = await client.request(method, params, { ...options, timeout })
    process.stdout.write(JSON.stringify(result ?? null) + '\n')
    return 0
  } finally {
    await client.close()
  }
}

/** zeromesh publish and zeromesh broadcast: one event, its outcome as JSON. */
async function runEvent (command, args) {
  const usage = USAGE[command]
  const { values, positionals } = parse(args, {
    seeds: { type: 'string' },
    timeout: { type: 'string' },
    where: { type: 'string' },
    ...(command === 'publish' ? { groups: { type: 'string' }, 'no-ack': { type: 'boolean' } } : {}),
    ...SECURITY_CLIENT_FLAGS,
  }, usage, true)
  if (values.help) { process.stdout.write(usage + '\n'); return 0 }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${usage}`)
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError(`give EVENT and at most one JSON-PAYLOAD\n\n${usage}`)
  const [event, json] = positionals
  let payload
  if (json !== undefined) {
    try { payload = JSON.parse(json) } catch (err) { throw new UsageError(`JSON-PAYLOAD is not valid JSON: ${err.message}`) }
  }
  // Every flag is checked before the client exists: a usage error must not leave it open.
  const options = { timeout: wholeOption(values.timeout, 'timeout', usage, ' of milliseconds'), where: labelsOption(values.where, '--where', usage) }
  if (values.groups !== undefined) options.groups = values.groups.split(',').map((g) => g.trim()).filter(Boolean)
  if (values['no-ack']) options.ack = false
  const client = new Client({ seeds: values.seeds, security: clientSecurity(values, usage) })
  try {
    if (command === 'publish') {
      try {
        process.stdout.write(JSON.stringify(await client.publish(event, payload, options)) + '\n')
      } catch (err) {
        if (err.failed !== undefined) process.stderr.write(JSON.stringify({ delivered: err.delivered, failed: err.failed.map((f) => ({ group: f.group, endpoint: f.endpoint, code: f.error.code, remoteCode: f.error.remoteCode ?? null, message: f.error.message })) }) + '\n')
        throw err
      }
      return 0
    }
    const out = await client.broadcast(event, payload, options)
    process.stdout.write(JSON.stringify({ ...out, failed: out.failed.map((f) => ({ endpoint: f.endpoint, code: f.error.code, remoteCode: f.error.remoteCode ?? null, message: f.error.message })) }) + '\n')
    return out.failed.length + out.unreached.length === 0 ? 0 : 1
  } finally {
    await client.close()
  }
}

async function runDemoCommand (args) {
  const { values } = parse(args, {
    duration: { type: 'string' },
    peers: { type: 'string' },
    'no-chaos': { type: 'boolean' },
    secure: { type: 'boolean' },
  }, USAGE.demo)
  if (values.help) { process.stdout.write(USAGE.demo + '\n'); return 0 }
  const duration = values.duration === undefined ? 40 : Number(values.duration)
  if (!(duration >= 5 && duration <= 3600)) throw new UsageError(`--duration must be 5 to 3600 seconds\n\n${USAGE.demo}`)
  const peers = wholeOption(values.peers, 'peers', USAGE.demo) ?? 3
  if (peers < 1 || peers > 16) throw new UsageError(`--peers must be 1 to 16\n\n${USAGE.demo}`)
  const { runDemo } = await import('../demo/demo.js')
  return runDemo({ duration, peers, chaos: !values['no-chaos'], secure: values.secure === true })
}

async function runBenchCommand (args) {
  const { values } = parse(args, {
    seeds: { type: 'string' },
    concurrency: { type: 'string' },
    duration: { type: 'string' },
    compare: { type: 'boolean' },
    secure: { type: 'boolean' },
    payload: { type: 'string' },
    json: { type: 'boolean' },
    ...SECURITY_CLIENT_FLAGS,
  }, USAGE.bench)
  if (values.help) { process.stdout.write(USAGE.bench + '\n'); return 0 }
  const concurrency = (values.concurrency ?? '1,16,256').split(',').map(Number)
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1 || c > 10000)) throw new UsageError(`--concurrency must list whole numbers from 1 to 10000\n\n${USAGE.bench}`)
  const seconds = values.duration === undefined ? 5 : Number(values.duration)
  if (!(seconds >= 1 && seconds <= 600)) throw new UsageError(`--duration must be 1 to 600 seconds\n\n${USAGE.bench}`)
  const { runBench } = await import('../bench/request-path/command.js')
  const security = clientSecurity(values, USAGE.bench)
  if (security !== undefined && values.seeds === undefined) throw new UsageError(`--cluster-pub and --key are for --seeds; without them bench starts its own peers (--secure adds a secured one)\n\n${USAGE.bench}`)
  const payload = sizeOption(values.payload ?? '40', 'payload', USAGE.bench)
  if (payload < 16 || payload > 1000000) throw new UsageError(`--payload must be 16 bytes to 1m, got "${values.payload}"\n\n${USAGE.bench}`)
  return runBench({ seeds: values.seeds?.split(',').map((s) => s.trim()), security, concurrency, seconds, compare: values.compare, secure: values.secure === true, payload, json: values.json })
}

/**
 * A client of --seeds (and the security flags), and the members the first seed that answers
 * lists, each live one with what it serves (`serves`: asked of the member itself, null when
 * it did not say): for `members` and `describe`.
 */
async function clusterServices (args, usage) {
  const { values } = parse(args, {
    seeds: { type: 'string' },
    json: { type: 'boolean' },
    timeout: { type: 'string' },
    ...SECURITY_CLIENT_FLAGS,
  }, usage)
  if (values.help) return { values }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${usage}`)
  const seeds = values.seeds.split(',').map((x) => x.trim()).filter(Boolean)
  const client = new Client({ seeds, discover: false, timeout: wholeOption(values.timeout, 'timeout', usage, ' of milliseconds'), security: clientSecurity(values, usage) })
  try {
    // The first seed that answers; the next one when it does not.
    let members
    for (const [i, from] of client.options.seeds.entries()) {
      try {
        members = await client.members(from)
        break
      } catch (err) {
        if (i === client.options.seeds.length - 1 || err.code === InvalidArgumentError.code) throw err
      }
    }
    // What each live member serves, asked of the member itself (the list carries only digests).
    await Promise.all(members.map(async (m) => {
      if (m.state !== 'alive' && m.state !== 'suspect') { m.serves = null; return }
      m.serves = await client.describe(m.endpoint).catch(() => null)
    }))
    return { values, members }
  } finally {
    await client.close()
  }
}

async function runDescribe (args) {
  const { values, members } = await clusterServices(args, USAGE.describe)
  if (values.help) { process.stdout.write(USAGE.describe + '\n'); return 0 }
  // Each service once: peers whose answers are the same are grouped.
  const services = new Map()
  for (const m of members) {
    if (m.serves === null || m.serves === undefined) continue
    const key = m.serves === 'any' ? 'any' : JSON.stringify(m.serves)
    const s = services.get(key)
    if (s === undefined) services.set(key, { endpoints: [m.endpoint], ...(m.serves === 'any' ? { any: true } : m.serves) })
    else s.endpoints.push(m.endpoint)
  }
  const list = [...services.values()]
  if (values.json) { process.stdout.write(JSON.stringify(list) + '\n'); return 0 }
  const out = []
  for (const s of list) {
    out.push(`${s.endpoints.join(', ')}`)
    if (s.any) { out.push('  serves any method (a peer older than service descriptors)', ''); continue }
    const facts = [s.version === null ? null : `version ${s.version}`, ...Object.entries(s.labels).map(([k, v]) => `${k}=${v}`), s.capacity === null ? null : `capacity ${s.capacity}`].filter((x) => x !== null)
    if (facts.length > 0) out.push(`  ${facts.join(', ')}`)
    const inContracts = new Set()
    for (const c of s.contracts) {
      out.push(`  contract ${c.name}${c.version === null ? '' : ` ${c.version}`}`)
      for (const m of c.methods) {
        inContracts.add(m.name)
        out.push(`    ${m.name}${m.stream ? ' (stream)' : ''}`)
        out.push(`      input:  ${m.input === null ? '(no JSON Schema)' : JSON.stringify(m.input)}`)
        out.push(`      output: ${m.output === null ? '(no JSON Schema)' : JSON.stringify(m.output)}`)
      }
      for (const e of c.events ?? []) out.push(`    event ${e.name}`, `      payload: ${e.payload === null ? '(no JSON Schema)' : JSON.stringify(e.payload)}`)
    }
    const plain = s.methods.filter((m) => !inContracts.has(m))
    if (plain.length > 0) out.push(`  methods without a contract: ${plain.join(', ')}`)
    for (const e of s.events ?? []) out.push(`  subscribes to ${e.event}${e.group === e.event ? '' : ` in group ${e.group}`}`)
    out.push('')
  }
  if (list.length === 0) out.push('no live peer said what it serves')
  process.stdout.write(out.join('\n') + '\n')
  return 0
}

async function runMembers (args) {
  const { values, members } = await clusterServices(args, USAGE.members)
  if (values.help) { process.stdout.write(USAGE.members + '\n'); return 0 }
  if (values.json) {
    process.stdout.write(JSON.stringify(members) + '\n')
  } else {
    const rows = [['ENDPOINT', 'STATE', 'INCARNATION', 'METHODS', 'VERSION', 'LABELS', 'META']]
    const methods = (s) => s === null ? '?' : s === 'any' ? '(any)' : s.methods.length <= 6 ? s.methods.join(',') : `${s.methods.slice(0, 5).join(',')},+${s.methods.length - 5}`
    for (const m of members) {
      const s = m.serves
      rows.push([m.endpoint, m.state, String(m.incarnation), methods(s), s?.version ?? '-', s === null || s === 'any' ? '-' : Object.entries(s.labels).map(([k, v]) => `${k}=${v}`).join(',') || '-', JSON.stringify(m.meta)])
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
    for (const r of rows) process.stdout.write(r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i])).join('  ') + '\n')
  }
  return 0
}

function log (msg) {
  process.stderr.write(`[zeromesh ${new Date().toISOString()}] ${msg}\n`)
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
}, (err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`zeromesh: ${err.message}\n`)
    process.exitCode = 2
  } else if (typeof err?.code === 'string') {
    process.stderr.write(`${err.code}: ${String(err.message).replace(/^zeromesh: /, '')}${err.remoteCode ? ` (remote code ${err.remoteCode})` : ''}\n`)
    process.exitCode = err.code === InvalidArgumentError.code ? 2 : 1
  } else {
    process.stderr.write(`zeromesh: ${err?.stack ?? err}\n`)
    process.exitCode = 1
  }
})
