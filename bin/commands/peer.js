// zeromesh peer: runs a peer until SIGTERM or SIGINT, which drain it (exit 0).
import path from 'node:path'
import process from 'node:process'
import { Peer, peerDefaults } from '../../peer/index.js'
import { latencyOf } from '../../peer/peer.js'
import { USAGE } from '../usage.js'
import { UsageError, parse, sizeOption, wholeOption, fromEnvironment, httpOption, unknownEnvironment, labelsOption } from '../args.js'
import { SECURITY_PEER_FLAGS, SECURITY_CLIENT_FLAGS, peerSecurity } from '../security-flags.js'
import { invalidArgument } from '../../protocol/errors.js'
import { adviseAllocatorOnce, ALLOCATOR_SETTINGS } from '../../peer/allocator-advice.js'

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
  'max-queue-ms': { type: 'string' },
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

export async function run (args) {
  const { values: given } = parse(args, PEER_FLAGS, USAGE.peer)
  if (given.help) { process.stdout.write(USAGE.peer + '\n'); return 0 }
  const values = fromEnvironment(given, PEER_FLAGS, USAGE.peer)
  const { cliLogger } = await import('../../ops/logger.js')
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
    ? [new URL('../../demo/handlers.js', import.meta.url)]
    : values.handlers === undefined
      ? undefined
      : (values.handlers.startsWith('data:') ? [values.handlers] : values.handlers.split(',').map((x) => x.trim()).filter(Boolean)) // a data: URL has commas of its own
          .map((h) => /^[a-z]+:/i.test(h) ? h : path.resolve(h))
  let meta
  if (values.meta !== undefined) {
    try { meta = JSON.parse(values.meta) } catch (err) { throw new UsageError(`--meta is not valid JSON: ${err.message}`) }
  }
  const ops = httpOption(values.http, values['http-view'], USAGE.peer)
  const security = peerSecurity(values, USAGE.peer) // an object: CURVE; false or undefined: plain
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
    maxQueueMs: wholeOption(values['max-queue-ms'], 'max-queue-ms', USAGE.peer, ' of milliseconds'),
    flowHeader: values['flow-header'],
    maxInflightBytes: values['max-inflight-bytes'] === undefined ? undefined : sizeOption(values['max-inflight-bytes'], 'max-inflight-bytes', USAGE.peer),
    drainTimeout: wholeOption(values['drain-timeout'], 'drain-timeout', USAGE.peer, ' of milliseconds'),
    memoryLimit: values['memory-limit'] === undefined || values['memory-limit'] === 'cgroup' ? values['memory-limit'] : sizeOption(values['memory-limit'], 'memory-limit', USAGE.peer),
    security,
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
    const [{ peerMetrics }, { startOpsServer }, { ClusterView }, { Client }, { openapiOf, asyncapiOf }] = await Promise.all([import('../../ops/metrics.js'), import('../../ops/http.js'), import('../../ops/view.js'), import('../../client/index.js'), import('../../http/index.js')])
    const registry = peerMetrics(peer)
    // What other members serve, for the view: a client of the cluster asks them, while the page
    // is open (in a secured cluster this peer has no client key: only its own service shows).
    const watch = security ? null : () => {
      const c = new Client({ seeds: [peer.endpoint] })
      return { services: () => new Map(c.peers().map((p) => [p.endpoint, p.service])), close: () => c.close() }
    }
    const view = ops.view ? new ClusterView(peer, latencyOf(peer), { watch }) : null
    try {
      // Its own documents: what it serves, as zeromesh/http describes it (a schema it states none for is open, warned once in the log).
      const warned = new Set()
      const onWarning = (m) => { if (!warned.has(m)) { warned.add(m); logger.warn(m) } }
      const documents = { '/openapi.json': () => openapiOf(peer.service(), { onWarning }), '/asyncapi.json': () => asyncapiOf(peer.service(), { onWarning }) }
      opsServer = await startOpsServer({ host: ops.host, port: ops.port, registry, ready: () => peer.ready, view, documents })
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
  process.on('SIGHUP', () => {
    if (!security) { logger.warn({}, 'SIGHUP: not secured, no allow-list to read'); return }
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
  setTimeout(() => process.exit(code), peerDefaults.stopLinger + 500).unref() // the CLI gives no stopLinger: the default's
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
