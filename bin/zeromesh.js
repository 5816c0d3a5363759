#!/usr/bin/env node
// The zeromesh command line. Results go to stdout, logs and errors to stderr.
import { parseArgs } from 'node:util'
import path from 'node:path'
import process from 'node:process'
import { Peer, Client } from '../index.js'
import { readKeyFile, keyText, writeKeyPair } from '../transport/keys.js'
import { VERSION } from '../peer/version.js'

const USAGE = {
  main: `usage: zeromesh <command> [options]

commands:
  peer      run a peer node that serves requests and joins its cluster
  request   send one request and print its JSON result
  members   print a peer's view of the cluster membership
  demo      the failover demo: peers, load, a kill, a join, a drain, a freeze
  bench     throughput and latency of small requests, with --compare against raw zeromq.js (per message and coalesced) and a broker
  keygen    write a CURVE keypair: PREFIX.key (secret) and PREFIX.pub (public)

Run "zeromesh <command> --help" for the options of a command; "zeromesh --version" prints the version.`,
  peer: `usage: zeromesh peer [--bind EP] [--advertise EP] [--seeds EP,EP] [--handlers MODULE] [--meta JSON]
                     [--threads N] [--max-queue N] [--drain-timeout MS] [--http [HOST:]PORT] [--log-level LEVEL]
                     [--cluster-key FILE [--allow LIST] | --insecure]

Runs a peer. Prints its endpoint alone on stdout once bound; logs go to stderr. It joins the
cluster through --seeds (retrying unreachable seeds) and logs membership changes.
SIGTERM or SIGINT stops it gracefully (announces its leave, in-flight requests finish) and it
exits 0.

  --bind EP          endpoint to bind (default tcp://127.0.0.1:0, an ephemeral port)
  --advertise EP     endpoint others should use (for a wildcard bind such as tcp://0.0.0.0:5555)
  --seeds EP,EP      peers to join through (comma-separated): endpoints, dns://NAME:PORT (every
                     A/AAAA record of NAME) or dns+srv://_service._proto.NAME (SRV records),
                     resolved again every 30 s and whenever no seed answers
  --dns-servers LIST DNS servers for DNS seeds, IP[:PORT] comma-separated (default: the system's)
  --handlers MODULE  module whose exported functions (or default-export object) are the
                     methods; default: the demo handlers echo, whoami, spin, sleep
  --threads N        worker threads running the handlers (default: one per core; 0: run them
                     on the main thread, for I/O-bound handlers)
  --max-queue N      requests waiting for a thread before the peer answers busy
  --drain-timeout MS longest wait for in-flight requests when stopping (default 10000)
  --meta JSON        metadata gossiped with this peer, e.g. '{"zone":"a","capacity":4}'
  --http [HOST:]PORT operations endpoint: /metrics (Prometheus), /healthz, /readyz; on
                     127.0.0.1 unless HOST is given (0.0.0.0:9090 in a container)
  --log-level LEVEL  trace, debug, info (default), warn, error, fatal or silent; logs are
                     JSON lines on stderr, pretty on a terminal

Every flag can come from the environment instead: --max-queue 64 is ZEROMESH_MAX_QUEUE=64,
--insecure is ZEROMESH_INSECURE=true (flags win); ZEROMESH_CLUSTER_KEY holds the key itself.

security (README, Security): off loopback a peer runs CURVE or refuses to start
  --cluster-key FILE the cluster's secret key (PREFIX.key of "zeromesh keygen"), shared by
                     every peer; env ZEROMESH_CLUSTER_KEY holds the key itself instead
  --allow LIST       client public keys let in: .pub files, directories of .pub files, or
                     keys, comma-separated (env ZEROMESH_ALLOW); SIGHUP reads them again
  --insecure         run plain (no CURVE) on a non-loopback address, on purpose`,
  members: `usage: zeromesh members --seeds EP [--json] [--timeout MS] [--cluster-pub FILE --key FILE]

Prints the membership as a peer sees it, itself included: a table, or with --json the same
objects as peer.members() as a JSON array, alone on stdout. Asks the first seed, and the next
one when a seed does not answer.

  --seeds EP,EP      the peers to ask, in order
  --json             machine-readable output
  --timeout MS       give up after this long (default 5000)

security (README, Security): needed for a secured cluster, and for any non-loopback seed
  --cluster-pub FILE the cluster's public key (PREFIX.pub); env ZEROMESH_CLUSTER_PUB
  --key FILE         this client's secret key (PREFIX.key), its .pub on the peers' allow-list;
                     env ZEROMESH_KEY
  --insecure         talk plain to non-loopback seeds, on purpose`,
  demo: `usage: zeromesh demo [--duration S] [--peers N] [--no-chaos] [--secure]

Starts N peers (default 3) on loopback ports, a client seeded with only the first, and steady
load (whoami and spin). Then: a peer is killed, a new one joins, one is drained with SIGTERM,
one is frozen and thawed. A live view on a terminal, plain lines otherwise. Exits 0 only if no
request failed. Ctrl-C stops everything it started.

  --duration S       seconds (default 40)
  --peers N          peers to start with (default 3; the timeline needs 3)
  --no-chaos         load only
  --secure           run the cluster with CURVE and an allow-list (keys in a temporary directory)`,
  bench: `usage: zeromesh bench [--seeds EP,EP] [--concurrency 1,16,256] [--duration S] [--compare] [--secure] [--payload SIZE] [--json]

Measures small echo requests at each concurrency (requests in flight) against a peer it starts
itself (echo on the peer's main thread), or against --seeds. Prints one table, req/s and p99
side by side for every system, and the ratios; a progress line on a terminal; --json prints
one JSON object alone on stdout. Every process it starts is gone when it ends. With --compare, the same run also measures raw
zeromq.js (Dealer -> Router echo, one message per request, and with a turn's requests
coalesced 32 per message) and the echo behind a central broker (zeromq Proxy, 2 workers),
and prints zeromesh's ratios to each.

  --seeds EP,EP        peers to measure instead of starting one
  --concurrency LIST   requests in flight, comma-separated (default 1,16,256)
  --duration S         seconds per measurement (default 5)
  --compare            also measure raw zeromq.js and the broker
  --secure             also measure a peer run with CURVE and an allow-list (keys made for the run)
  --payload SIZE       bytes per request and reply: 40 (default), 1k, 64k, 1m; from 1k on the
                       table adds MB/s (payload carried both ways)
  --json               machine-readable output

security (README, Security): needed for a secured cluster, and for any non-loopback seed
  --cluster-pub FILE the cluster's public key (PREFIX.pub); env ZEROMESH_CLUSTER_PUB
  --key FILE         this client's secret key (PREFIX.key), its .pub on the peers' allow-list;
                     env ZEROMESH_KEY
  --insecure         talk plain to non-loopback seeds, on purpose`,
  request: `usage: zeromesh request --seeds EP[,EP] METHOD [JSON-ARGS] [--timeout MS] [--no-idempotent] [--cluster-pub FILE --key FILE]

Sends METHOD(JSON-ARGS) and prints the JSON result alone on stdout.
On failure prints "CODE: message" on stderr and exits 1; bad usage exits 2.

  --seeds EP,EP      peers to send to (comma-separated)
  --timeout MS       whole deadline, retries included (default 5000)
  --no-idempotent    never re-send after a lost connection

security (README, Security): needed for a secured cluster, and for any non-loopback seed
  --cluster-pub FILE the cluster's public key (PREFIX.pub); env ZEROMESH_CLUSTER_PUB
  --key FILE         this client's secret key (PREFIX.key), its .pub on the peers' allow-list;
                     env ZEROMESH_KEY
  --insecure         talk plain to non-loopback seeds, on purpose`,
  keygen: `usage: zeromesh keygen PREFIX

Writes a new CURVE keypair, one line of Z85 text each, and prints the public key on stdout:
  PREFIX.key   the secret key, file mode 0600. Keep it private. A cluster key goes to every
               peer (--cluster-key); a client key stays with its client (--key).
  PREFIX.pub   the public key. The cluster's goes to every client (--cluster-pub); a client's
               goes on the peers' allow-list (--allow).
Never overwrites an existing file.`,
}

class UsageError extends Error {}

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
  if (command === 'demo') return runDemoCommand(rest)
  if (command === 'bench') return runBenchCommand(rest)
  if (command === 'keygen') return runKeygen(rest)
  throw new UsageError(`unknown command "${command}"\n\n${USAGE.main}`)
}

function parse (args, options, usage, allowPositionals = false) {
  // "--threads -1": a value that looks like an option is still the flag's value, so the
  // flag's own check can say what is wrong with it.
  const joined = []
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : null
    if (name !== null && options[name]?.type === 'string' && /^-\d/.test(args[i + 1] ?? '')) joined.push(`${args[i]}=${args[++i]}`)
    else joined.push(args[i])
  }
  try {
    return parseArgs({ args: joined, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true })
  } catch (err) {
    const unknown = /Unknown option '(-{1,2})([^']+)'/.exec(err.message)
    const near = unknown === null ? null : closest(unknown[2], Object.keys(options))
    const hint = near === null ? '' : `; did you mean --${near}?`
    throw new UsageError(`${err.message.replace(/\. To specify a positional argument.*$/s, '')}${hint}\n\n${usage}`)
  }
}

/** The known flag nearest to `name` (a prefix of it, or at most 2 edits away), or null. */
function closest (name, known) {
  const distance = (a, b) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
    for (let j = 1; j <= b.length; j++) d[0][j] = j
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    return d[a.length][b.length]
  }
  let best = null
  let bestDistance = 3
  for (const k of known) {
    const dist = k.startsWith(name) || name.startsWith(k) ? 1 : distance(name, k)
    if (dist < bestDistance) { best = k; bestDistance = dist }
  }
  return best
}

/** A size in bytes: 40, 1k (1,000), 64k, 1m (1,000,000). */
function sizeOption (v, name, usage) {
  const m = /^(\d+)([km]?)$/i.exec(v)
  if (m === null) throw new UsageError(`--${name} must be a size in bytes such as 40, 1k, 64k or 1m, got "${v}"\n\n${usage}`)
  return Number(m[1]) * ({ '': 1, k: 1000, m: 1000000 })[m[2].toLowerCase()]
}

/** A whole-number flag (`unit` names what it counts, for the message), or undefined. */
function wholeOption (v, name, usage, unit = '') {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number${unit}, got "${v}"\n\n${usage}`)
  return n
}

const env = process.env
const SECURITY_PEER_FLAGS = { 'cluster-key': { type: 'string' }, allow: { type: 'string' }, insecure: { type: 'boolean' } }
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
  if (clusterKey === undefined) {
    if (allow !== undefined) throw new UsageError(`--allow needs --cluster-key: the allow-list is checked at CURVE handshakes\n\n${usage}`)
    return undefined
  }
  return { clusterKey, allow }
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
  'drain-timeout': { type: 'string' },
  meta: { type: 'string' },
  threads: { type: 'string' },
  'max-queue': { type: 'string' },
  http: { type: 'string' },
  'log-level': { type: 'string' },
  'dns-servers': { type: 'string' },
  ...SECURITY_PEER_FLAGS,
}

/**
 * Flags not given on the command line from the environment: --max-queue from
 * ZEROMESH_MAX_QUEUE, and so on (flags win). --cluster-key is the exception: its variable,
 * ZEROMESH_CLUSTER_KEY, holds the key itself (see peerSecurity).
 */
function fromEnvironment (values, flags, usage) {
  for (const [flag, spec] of Object.entries(flags)) {
    if (values[flag] !== undefined || flag === 'cluster-key') continue
    const name = `ZEROMESH_${flag.toUpperCase().replace(/-/g, '_')}`
    const v = env[name]
    if (v === undefined || v === '') continue
    if (spec.type === 'boolean') {
      if (/^(1|true|yes)$/i.test(v)) values[flag] = true
      else if (!/^(0|false|no)$/i.test(v)) throw new UsageError(`${name} must be true or false, got "${v}"\n\n${usage}`)
    } else {
      values[flag] = v
    }
  }
  return values
}

/** --http [HOST:]PORT: loopback unless a host is given (a container binds 0.0.0.0:PORT). */
function httpOption (v, usage) {
  if (v === undefined) return null
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(v)
  const port = m === null ? NaN : Number(m[2])
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--http must be PORT or HOST:PORT, such as 9090 or 0.0.0.0:9090, got "${v}"\n\n${usage}`)
  return { host: m[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1', port }
}

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
  // Handlers run in a pool of worker threads; the main thread does I/O and gossip.
  const handlers = values.handlers === undefined
    ? new URL('../demo/handlers.js', import.meta.url)
    : /^[a-z]+:/i.test(values.handlers) ? values.handlers : path.resolve(values.handlers)
  let meta
  if (values.meta !== undefined) {
    try { meta = JSON.parse(values.meta) } catch (err) { throw new UsageError(`--meta is not valid JSON: ${err.message}`) }
  }
  const ops = httpOption(values.http, USAGE.peer)
  const peer = new Peer({
    meta,
    bind: values.bind,
    advertise: values.advertise,
    seeds: values.seeds,
    handlers,
    threads: wholeOption(values.threads, 'threads', USAGE.peer),
    maxQueue: wholeOption(values['max-queue'], 'max-queue', USAGE.peer),
    drainTimeout: wholeOption(values['drain-timeout'], 'drain-timeout', USAGE.peer, ' of milliseconds'),
    security: peerSecurity(values, USAGE.peer),
    logger,
    dns: values['dns-servers'] === undefined ? undefined : { servers: values['dns-servers'].split(',').map((x) => x.trim()).filter(Boolean) },
  })
  const endpoint = await peer.start()
  process.stdout.write(endpoint + '\n')
  let opsServer = null
  if (ops !== null) {
    const [{ peerMetrics }, { startOpsServer }] = await Promise.all([import('../ops/metrics.js'), import('../ops/http.js')])
    opsServer = await startOpsServer({ ...ops, registry: peerMetrics(peer), ready: () => peer.ready })
    logger.info({ http: `${ops.host}:${opsServer.port}` }, `operations endpoint on http://${ops.host.includes(':') ? `[${ops.host}]` : ops.host}:${opsServer.port} (/metrics, /healthz, /readyz)`)
  }
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
    let stopping = false
    const onSignal = (sig) => {
      if (stopping) { logger.warn({ signal: sig }, `${sig} again: exiting now`); process.exit(130) }
      stopping = true
      logger.info({ signal: sig }, `${sig}: draining`)
      peer.stop().then(() => resolve(0), (err) => { logger.error({ err: err.message }, `stop failed: ${err.message}`); resolve(1) })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
    // No handler thread can be started any more: the peer has left the cluster and stops;
    // exit 1 so a supervisor (pm2, systemd, Kubernetes) starts a fresh process.
    peer.on('unhealthy', () => {
      stopping = true
      peer.stop().then(() => resolve(1), () => resolve(1))
    })
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

async function runRequest (args) {
  const { values, positionals } = parse(args, {
    seeds: { type: 'string' },
    timeout: { type: 'string' },
    'no-idempotent': { type: 'boolean' },
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
  const client = new Client({ seeds: values.seeds, security: clientSecurity(values, USAGE.request) })
  try {
    const result = await client.request(method, params, {
      timeout: wholeOption(values.timeout, 'timeout', USAGE.request, ' of milliseconds'),
      idempotent: values['no-idempotent'] ? false : undefined,
    })
    process.stdout.write(JSON.stringify(result ?? null) + '\n')
    return 0
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
  const { runBench } = await import('../bench/command.js')
  const security = clientSecurity(values, USAGE.bench)
  if (security !== undefined && values.seeds === undefined) throw new UsageError(`--cluster-pub and --key are for --seeds; without them bench starts its own peers (--secure adds a secured one)\n\n${USAGE.bench}`)
  const payload = sizeOption(values.payload ?? '40', 'payload', USAGE.bench)
  if (payload < 16 || payload > 1000000) throw new UsageError(`--payload must be 16 bytes to 1m, got "${values.payload}"\n\n${USAGE.bench}`)
  return runBench({ seeds: values.seeds?.split(',').map((s) => s.trim()), security, concurrency, seconds, compare: values.compare, secure: values.secure === true, payload, json: values.json })
}

async function runMembers (args) {
  const { values } = parse(args, {
    seeds: { type: 'string' },
    json: { type: 'boolean' },
    timeout: { type: 'string' },
    ...SECURITY_CLIENT_FLAGS,
  }, USAGE.members)
  if (values.help) { process.stdout.write(USAGE.members + '\n'); return 0 }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${USAGE.members}`)
  const seeds = values.seeds.split(',').map((x) => x.trim()).filter(Boolean)
  const client = new Client({ seeds, discover: false, timeout: wholeOption(values.timeout, 'timeout', USAGE.members, ' of milliseconds'), security: clientSecurity(values, USAGE.members) })
  try {
    // The first seed that answers; the next one when it does not.
    let members
    for (const [i, from] of client.options.seeds.entries()) {
      try {
        members = await client.members(from)
        break
      } catch (err) {
        if (i === client.options.seeds.length - 1 || err.code === 'ERR_ZEROMESH_INVALID_ARGUMENT') throw err
      }
    }
    if (values.json) {
      process.stdout.write(JSON.stringify(members) + '\n')
    } else {
      const rows = [['ENDPOINT', 'STATE', 'INCARNATION', 'META']]
      for (const m of members) rows.push([m.endpoint, m.state, String(m.incarnation), JSON.stringify(m.meta)])
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
      for (const r of rows) process.stdout.write(r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i])).join('  ') + '\n')
    }
    return 0
  } finally {
    await client.close()
  }
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
    process.exitCode = err.code === 'ERR_ZEROMESH_INVALID_ARGUMENT' ? 2 : 1
  } else {
    process.stderr.write(`zeromesh: ${err?.stack ?? err}\n`)
    process.exitCode = 1
  }
})
