// Where zeromesh's cost at 1 in flight lives, rung by rung: raw zeromq.js with msgpackr at
// both ends (the floor), zeromesh's Client and peer, and each of them against a bare side that
// speaks the same protocol with nothing around it (bench/bare-peer.js; bareClient below: a
// DEALER that packs one request frame, sends it and decodes the reply). The difference
// between a row with a zeromesh side and the same row with that side bare is what the side's
// own work (bookkeeping, duplicates memory, routing) costs; bare against bare is what the
// protocol and its codec cost, and the bare client on a connecting ROUTER (the client's socket
// type and settings, transport/settings.js) against the bare client on a DEALER what the socket
// type costs; a Peer started by a script (bench/api-peer.js, the same handler module) against
// `zeromesh peer` what the command line's process adds. Each system is measured in turn,
// round after round, in an order that reverses every round. Per system: req/s, its ratio to raw (median of the per-round
// ratios), and CPU time per request of each process's main thread and ZeroMQ I/O thread
// (schedstat, to the nanosecond: steadier than req/s on these noisy 2-core machines).
// With --size BYTES, every request asks for a reply of that many bytes (a fresh Buffer, made by
// the handler bench/bytes-handler.js, the bare peer or the raw server) and the raw client is a
// DEALER sending a small JSON ask, one message per request: where the cost of large values
// lives (issue 26, item 7); the script's Peer and the raw server are also measured beside 2 MB
// and 24 MB of state of their own (bench/api-peer.js, bench/raw-echo-server.js). --inflight K keeps K requests in flight (K loops of one at a time).
// Usage: node bench/ladder.js [--rounds 15] [--seconds 1.5] [--size BYTES] [--inflight 1]
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import * as zmq from 'zeromq'
import { Client } from '../index.js'
import { encodeRequest, decode } from '../protocol/codec.js'
import { MessageType, Limits } from '../protocol/constants.js'
import { connectingRouterOptions } from '../transport/settings.js'
import { child, killChildren, median, PAYLOAD, rawClientNonBlocking } from './harness.js'
import { mainAndIo } from './proc-threads.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, seconds: { type: 'string', default: '1.5' }, size: { type: 'string' }, inflight: { type: 'string', default: '1' } } })
const ROUNDS = Number(values.rounds)
const SECONDS = Number(values.seconds)
const SIZE = values.size === undefined ? null : Number(values.size)
const INFLIGHT = Number(values.inflight)
if (SIZE !== null && !(Number.isInteger(SIZE) && SIZE >= 0 && SIZE <= 16e6)) throw new Error('--size: a whole number of bytes, at most 16e6')
if (!(Number.isInteger(INFLIGHT) && INFLIGHT >= 1)) throw new Error('--inflight: a whole number, at least 1')
// What every zeromesh-protocol request calls: the demo's echo, or with --size the bytes handler.
const METHOD = SIZE === null ? 'echo' : 'bytes'
const ARGS = SIZE === null ? PAYLOAD : { size: SIZE }
const here = (f) => fileURLToPath(new URL(f, import.meta.url))

/**
 * The zeromesh protocol as a client, with nothing around it: one request frame out, the reply
 * frame decoded. On a DEALER, or with `router` on a ROUTER set as the client's (one routing id
 * frame more each way, the id read back as the client's transport reads it).
 */
function bareClient (endpoint, router = false) {
  let sock, alias
  if (router) {
    sock = new zmq.Router(connectingRouterOptions({ maxMessageSize: Limits.maxMessageSize }))
    alias = `${endpoint}#1`
    sock.connect(endpoint, { routingId: alias })
  } else {
    sock = new zmq.Dealer({ linger: 0, sendTimeout: 0 })
    sock.connect(endpoint)
  }
  const pending = new Map()
  let nextId = 1
  ;(async () => {
    try {
      for (;;) {
        const parts = await sock.receive()
        if (router && parts[0].toString() !== alias) continue
        const msg = decode(parts[parts.length - 1])
        if (msg.type !== MessageType.REPLY) continue
        for (const r of msg.replies) {
          const resolve = pending.get(r.id)
          pending.delete(r.id)
          resolve?.(r.value)
        }
      }
    } catch {}
  })()
  return {
    one: () => new Promise((resolve) => {
      const id = nextId++
      pending.set(id, resolve)
      const frame = encodeRequest([[id, METHOD, ARGS, 30000]])
      sock.send(router ? [alias, frame] : frame).catch(() => {})
    }),
    close: () => sock.close(),
  }
}

/** A zeromesh Client of `endpoint`; `discover: false` against the bare peer, which has no member list. */
function zeromeshClient (endpoint, discover = true) {
  const c = new Client({ seeds: [endpoint], timeout: 30000, discover })
  return { one: () => c.request(METHOD, ARGS), close: () => c.close() }
}

/** With --size: a raw zeromq.js DEALER asking for SIZE bytes, one message per request (replies come in order). */
function rawBytesClient (endpoint) {
  const sock = new zmq.Dealer({ linger: 0, sendTimeout: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  sock.connect(endpoint)
  const ask = JSON.stringify(ARGS)
  const waiting = []
  let head = 0
  ;(async () => {
    try {
      for (;;) {
        const [frame] = await sock.receive()
        const resolve = waiting[head]
        waiting[head++] = undefined
        if (head > 1024 && head * 2 > waiting.length) { waiting.splice(0, head); head = 0 }
        resolve?.(frame)
      }
    } catch {}
  })()
  return {
    one: () => new Promise((resolve) => { waiting.push(resolve); sock.send(ask).catch(() => {}) }),
    close: () => sock.close(),
  }
}

/** CPU time so far of process `pid`'s main thread and ZeroMQ I/O threads, in us. */
function cpu (pid) {
  const { main, io } = mainAndIo(pid)
  return { main: main.runUs, io: io.runUs }
}

const handlers = SIZE === null ? here('../demo/handlers.js') : here('./bytes-handler.js')
const peer = await child([here('../bin/zeromesh.js'), 'peer', '--handlers', handlers, '--threads', '0', '--log-level', 'silent'])
const scripted = await child([here('./api-peer.js'), handlers])
// With large values, the same Peer beside 2 MB and 24 MB of application state: whether V8
// collects in full for their ArrayBuffers depends on the heap's size (RESULTS, "The heap band").
const padded = SIZE === null ? [] : await Promise.all([2, 24].map(async (mb) => ({ mb, ...await child([here('./api-peer.js'), handlers, String(mb)]) })))
// ...and the raw server beside the same state: what the state costs a process that does no more than raw.
const rawPadded = SIZE === null ? [] : await Promise.all([2, 24].map(async (mb) => ({ mb, ...await child([here('./raw-echo-server.js'), 'bytes', String(mb)]) })))
const bare = await child([here('./bare-peer.js')])
const rawServer = await child([here('./raw-echo-server.js'), SIZE === null ? 'msgpack' : 'bytes'])
const systems = [
  SIZE === null
    ? { name: 'raw zeromq.js + msgpackr both ends', ...rawClientNonBlocking(rawServer.line, 32, PAYLOAD, { msgpack: true }), server: rawServer.child.pid }
    : { name: `raw zeromq.js, ${SIZE} B replies`, ...rawBytesClient(rawServer.line), server: rawServer.child.pid },
  { name: 'zeromesh Client -> zeromesh peer', ...zeromeshClient(peer.line), server: peer.child.pid },
  { name: 'bare client -> zeromesh peer', ...bareClient(peer.line), server: peer.child.pid },
  { name: 'zeromesh Client -> Peer in a script (bench/api-peer.js)', ...zeromeshClient(scripted.line), server: scripted.child.pid },
  ...padded.map((p) => ({ name: `zeromesh Client -> Peer in a script with ${p.mb} MB of state`, ...zeromeshClient(p.line), server: p.child.pid })),
  ...rawPadded.map((p) => ({ name: `raw zeromq.js with ${p.mb} MB of state`, ...rawBytesClient(p.line), server: p.child.pid })),
  { name: 'zeromesh Client -> bare peer', ...zeromeshClient(bare.line, false), server: bare.child.pid },
  { name: 'bare client -> bare peer', ...bareClient(bare.line), server: bare.child.pid },
  { name: 'bare client on a ROUTER -> bare peer', ...bareClient(bare.line, true), server: bare.child.pid },
]
for (const s of systems) {
  for (let i = 0; i < 2000; i++) await s.one() // warm-up: connections made, code optimized
  s.rps = []; s.clientMain = []; s.clientIo = []; s.serverMain = []; s.serverIo = []
}

/** Requests from INFLIGHT loops, each one after another, until `until` (Date.now()); resolves with how many. */
async function drive (s, until) {
  let n = 0
  const loop = async () => { while (Date.now() < until) { await s.one(); n++ } }
  await Promise.all(Array.from({ length: INFLIGHT }, loop))
  return n
}

/** One measured run of `s`: `SECONDS` of requests, after a short warm-up. */
async function measure (s) {
  await drive(s, Date.now() + 200)
  const c0 = cpu(process.pid); const s0 = cpu(s.server); const t0 = process.hrtime.bigint()
  const n = await drive(s, Date.now() + SECONDS * 1000)
  const c1 = cpu(process.pid); const s1 = cpu(s.server); const ns = Number(process.hrtime.bigint() - t0)
  s.rps.push(n / ns * 1e9)
  s.clientMain.push((c1.main - c0.main) / n); s.clientIo.push((c1.io - c0.io) / n)
  s.serverMain.push((s1.main - s0.main) / n); s.serverIo.push((s1.io - s0.io) / n)
}

for (let r = 0; r < ROUNDS; r++) {
  process.stderr.write(`round ${r + 1} of ${ROUNDS}\n`)
  for (const s of r % 2 === 0 ? systems : [...systems].reverse()) await measure(s)
}

const raw = systems[0]
const us = (xs) => median(xs).toFixed(1)
const lines = [
  `${INFLIGHT} in flight${SIZE === null ? '' : `, replies of ${SIZE} B`}, ${ROUNDS} rounds of ${SECONDS} s per system, medians (\`node bench/ladder.js ${process.argv.slice(2).join(' ')}\`):`,
  '',
  `| system | req/s${SIZE === null ? '' : ' | MB/s'} | / raw | CPU us a request: client main | client I/O | server main | server I/O | all four |`,
  `| --- | ---:${SIZE === null ? '' : ' | ---:'} | ---: | ---: | ---: | ---: | ---: | ---: |`,
]
for (const s of systems) {
  const ratio = median(s.rps.map((x, i) => x / raw.rps[i]))
  const all = s.rps.map((_, i) => s.clientMain[i] + s.clientIo[i] + s.serverMain[i] + s.serverIo[i])
  const mbs = SIZE === null ? '' : ` | ${Math.round(median(s.rps) * SIZE / 1e6)}`
  lines.push(`| ${s.name} | ${Math.round(median(s.rps))}${mbs} | ${ratio.toFixed(3)}x | ${us(s.clientMain)} | ${us(s.clientIo)} | ${us(s.serverMain)} | ${us(s.serverIo)} | ${us(all)} |`)
}
process.stdout.write(lines.join('\n') + '\n')
for (const s of systems) await s.close()
killChildren()
process.exit(0)
