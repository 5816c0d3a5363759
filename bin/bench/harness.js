// Shared pieces of the benchmarks: child servers, a closed-loop driver with HDR percentiles,
// and the raw zeromq.js Dealer client that the baselines use.
import { parseArgs } from 'node:util'
import os from 'node:os'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import * as zmq from 'zeromq'
import hdr from 'hdr-histogram-js'
import { packValue, unpackValue } from '../../protocol/frames.js'

export const PAYLOAD = { op: 'echo', n: 12345, s: 'twenty-byte-payload!' } // ~40 bytes of msgpack

/** A request payload of about `bytes` bytes (as msgpack, and as the raw clients' JSON). */
export function payloadOf (bytes) {
  if (bytes <= 48) return PAYLOAD
  return { op: 'echo', n: 12345, s: 'x'.repeat(bytes - 32) }
}

const children = new Set()
/**
 * A Client `transport` option every checkout takes: a connector function (what checkouts
 * before 0.3 take) that is also { connector } (what later ones take, without the
 * deprecation warning), for benchmarks that run an older checkout's Client.
 */
export function anyClientTransport (connector) {
  return Object.assign((o) => connector(o), { connector })
}

export function killChildren () {
  for (const c of children) { try { process.kill(c.pid, 'SIGKILL') } catch {} }
  children.clear()
}
process.on('exit', killChildren)

/**
 * Starts `node args...` (or `command args...`, with `env` its environment) and resolves with
 * the first line it prints (an endpoint or a port).
 */
export function child (args, { command = process.execPath, env = process.env } = {}) {
  const c = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'], env })
  children.add(c)
  c.on('exit', () => children.delete(c))
  return new Promise((resolve, reject) => {
    let out = ''
    c.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve({ child: c, line: out.split('\n')[0].trim() })
    })
    c.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
}

/**
 * A checkout of zeromesh at `root` as a system to drive: its `zeromesh peer` child (the demo's
 * handlers on the main thread; `nodeFlags` before the script) and its own Client, warmed by
 * one request. Returns { one(), close() }.
 */
export async function zeromeshSystem (root, nodeFlags = []) {
  const { Client } = await import(pathToFileURL(path.join(root, 'index.js')).href)
  const { line } = await child([...nodeFlags, path.join(root, 'bin/zeromesh.js'), 'peer', '--handlers', path.join(root, 'demo/handlers.js'), '--threads', '0', '--log-level', 'silent'])
  const client = new Client({ seeds: [line], timeout: 30000 })
  await client.request('echo', PAYLOAD)
  return { one: () => client.request('echo', PAYLOAD), close: () => client.close() }
}

/**
 * Keeps `mb` megabytes of small objects alive for the life of the process, as an application's
 * own state would: V8 collects a heap under 8 MB differently from a larger one when large values
 * come and go (bench/results/earlier.md, "The heap band").
 */
export function keepState (mb) {
  const state = []
  for (let i = 0; i < mb * 1024 * 1024 / 64; i++) state.push({ i, next: i + 1, seen: null })
  globalThis.benchApplicationState = state
}

/** The command line of a compareWays benchmark: --seconds (2), --rounds (5), --concurrency (1,256). */
export function waysOptions () {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '2' }, rounds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '1,256' } } })
  return { seconds: Number(values.seconds), rounds: Number(values.rounds), levels: values.concurrency.split(',').map(Number) }
}

/**
 * Measures `ways` (name -> one()) in turn at each of `levels`, `rounds` times (who goes first
 * rotates each round), and prints a Markdown row per level: each way's median req/s (p50 ms)
 * and, for every way but the first, its per-round ratio to the first (median and range).
 */
export async function compareWays (ways, { levels, rounds, seconds }) {
  const names = Object.keys(ways)
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; ${rounds} rounds of ${seconds} s\n\n`)
  process.stdout.write(`| in flight | ${names.map((n) => `${n} req/s (p50 ms)`).join(' | ')} | ${names.slice(1).map((n) => `${n} / ${names[0]} per round: median (range)`).join(' | ')} |\n`)
  process.stdout.write(`| ---: | ${names.map(() => '---:').join(' | ')} | ${names.slice(1).map(() => '---').join(' | ')} |\n`)
  for (const c of levels) {
    const got = Object.fromEntries(names.map((n) => [n, []]))
    for (let r = 0; r < rounds; r++) {
      const order = [...names]
      for (let i = 0; i < r % order.length; i++) order.push(order.shift())
      for (const name of order) got[name].push(await drive(c, ways[name], { seconds }))
    }
    const cell = (name) => `${Math.round(median(got[name].map((x) => x.rps))).toLocaleString('en-US')} (${median(got[name].map((x) => x.p50)).toFixed(3)})`
    const ratio = (name) => { const rs = got[name].map((x, i) => x.rps / got[names[0]][i].rps); return `${median(rs).toFixed(2)} (${Math.min(...rs).toFixed(2)}-${Math.max(...rs).toFixed(2)})` }
    process.stdout.write(`| ${c} | ${names.map(cell).join(' | ')} | ${names.slice(1).map(ratio).join(' | ')} |\n`)
  }
}

/** The median of `xs` (the mean of the middle two for an even count). */
export function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/**
 * Runs `one()` from `concurrency` loops: a warm-up, then `seconds` measured. Resolves with
 * req/s and latency percentiles in ms. `onTick(fraction)` is called as time passes.
 */
export async function drive (concurrency, one, { seconds, warmupMs = 500, onTick } = {}) {
  const loop = async (until, hist) => {
    while (Date.now() < until) {
      const t = process.hrtime.bigint()
      await one()
      if (hist) hist.recordValue(Number(process.hrtime.bigint() - t) / 1000)
    }
  }
  const w = Date.now() + warmupMs
  await Promise.all(Array.from({ length: concurrency }, () => loop(w, null)))
  const hist = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60e6, numberOfSignificantValueDigits: 3 })
  const t0 = Date.now()
  const ticker = onTick ? setInterval(() => onTick(Math.min(1, (Date.now() - t0) / (seconds * 1000))), 200) : null
  await Promise.all(Array.from({ length: concurrency }, () => loop(t0 + seconds * 1000, hist)))
  if (ticker) clearInterval(ticker)
  const secs = (Date.now() - t0) / 1000
  const p = (q) => +(hist.getValueAtPercentile(q) / 1000).toFixed(3)
  return { rps: Math.round(hist.totalCount / secs), p2_5: p(2.5), p50: p(50), p97_5: p(97.5), p99: p(99), max: +(hist.maxValue / 1000).toFixed(3) }
}

// The raw clients keep their requests in flight in an array indexed by id, ids wrapping at
// 2^17 (far more than any run has in flight), as a careful hand-written client would: a Map
// churned by requests keeps finished ones alive into the old generation and makes every young
// collection slow (client/id-table.js says why), which would flatter zeromesh here.
const IDS = (1 << 17) - 1

/**
 * A raw zeromq.js Dealer: one writer, one reader, replies matched by a 4-byte id. With
 * `perMessage` 1 each request is its own ZeroMQ message, sent at once; with more, the
 * requests of one turn of the event loop leave at its end, up to `perMessage` per message
 * (a multipart message of [id, body] pairs, which the echo servers send back whole).
 */
export function rawClient (endpoint, perMessage = 1, payload = PAYLOAD) {
  const sock = new zmq.Dealer({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  sock.connect(endpoint)
  const pending = new Array(IDS + 1).fill(null) // by id: see IDS
  let nextId = 0
  let queue = [] // id, body, id, body, ...
  let writing = false
  const body = Buffer.from(JSON.stringify(payload))
  async function write () {
    writing = true
    while (queue.length > 0) {
      const all = queue
      queue = []
      for (let i = 0; i < all.length; i += 2 * perMessage) await sock.send(all.slice(i, i + 2 * perMessage))
    }
    writing = false
  }
  ;(async () => {
    try {
      for await (const msg of sock) {
        for (let i = 0; i < msg.length; i += 2) {
          const k = msg[i].readUInt32LE(0) & IDS
          const r = pending[k]
          pending[k] = null
          r?.()
        }
      }
    } catch {}
  })()
  return {
    one: () => new Promise((resolve) => {
      const id = nextId++ & IDS
      const idb = Buffer.allocUnsafe(4)
      idb.writeUInt32LE(id)
      pending[id] = resolve
      const idle = queue.length === 0 && !writing
      queue.push(idb, body)
      if (idle) perMessage === 1 ? write() : setImmediate(write)
    }),
    close: () => sock.close(),
  }
}

/**
 * The strongest raw client here: the requests of one turn of the event loop leave at its end,
 * up to `perMessage` per message packed into one frame ([id 4][length 4][body] each, as
 * zeromesh packs entries), sent without waiting (sendTimeout 0; a message refused with EAGAIN
 * goes again next turn), and one receive loop takes every reply (the echo server sends the
 * frame back as it came). What a hand-written zeromq.js client at its best does. With
 * `msgpack`, each request's body is the payload encoded with msgpackr (zeromesh's codec
 * settings) when it is made, and each reply's body is decoded (run it against
 * `raw-echo-server.js msgpack`, which decodes and encodes every body too): the same
 * MessagePack work as zeromesh, and nothing else.
 */
export function rawClientNonBlocking (endpoint, perMessage = 32, payload = PAYLOAD, { msgpack = false } = {}) {
  const sock = new zmq.Dealer({ linger: 0, sendTimeout: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  sock.connect(endpoint)
  const pending = new Array(IDS + 1).fill(null) // by id: see IDS
  const bodies = msgpack ? new Array(IDS + 1).fill(null) : null // by id: encoded when the request was made
  let nextId = 0
  let queue = [] // ids waiting for the end of the turn
  let scheduled = false
  const fixed = Buffer.from(JSON.stringify(payload))
  const schedule = () => { if (!scheduled) { scheduled = true; setImmediate(flush) } }
  function flush () {
    scheduled = false
    const all = queue
    queue = []
    for (let i = 0; i < all.length; i += perMessage) {
      const ids = all.slice(i, i + perMessage)
      let size = 0
      for (const id of ids) size += 8 + (msgpack ? bodies[id].length : fixed.length)
      const frame = Buffer.allocUnsafe(size)
      let at = 0
      for (const id of ids) {
        const body = msgpack ? bodies[id] : fixed
        frame.writeUInt32LE(id, at)
        frame.writeUInt32LE(body.length, at + 4)
        body.copy(frame, at + 8)
        at += 8 + body.length
        if (msgpack) bodies[id] = null
      }
      sock.send(frame).catch(() => { queue.push(...ids); schedule() })
    }
  }
  ;(async () => {
    try {
      for (;;) {
        const [frame] = await sock.receive()
        for (let at = 0; at + 8 <= frame.length;) {
          const id = frame.readUInt32LE(at) & IDS
          const length = frame.readUInt32LE(at + 4)
          const r = pending[id]
          pending[id] = null
          const value = msgpack ? unpackValue(frame.subarray(at + 8, at + 8 + length)) : undefined
          at += 8 + length
          r?.(value)
        }
      }
    } catch {}
  })()
  return {
    one: () => new Promise((resolve) => {
      const id = nextId++ & IDS
      pending[id] = resolve
      if (msgpack) bodies[id] = Buffer.from(packValue(payload)) // taken now, as a request's args are
      queue.push(id)
      schedule()
    }),
    close: () => sock.close(),
  }
}
