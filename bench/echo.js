// Small request/reply through zeromesh (Client -> Peer) against raw zeromq.js
// (Dealer -> Router echo, one message per request), measured in one run, server in a child
// process, at several concurrencies. Usage: node bench/echo.js [--seconds 3] [--json]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import * as zmq from 'zeromq'
import hdr from 'hdr-histogram-js'
import { Client } from '../index.js'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, json: { type: 'boolean' }, concurrency: { type: 'string', default: '1,16,256' } } })
const SECONDS = Number(values.seconds)
const LEVELS = values.concurrency.split(',').map(Number)
const WARMUP_MS = 500
const PAYLOAD = { op: 'echo', n: 12345, s: 'twenty-byte-payload!' } // ~40 bytes of msgpack

const children = []
function child (args) {
  const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(c)
  return new Promise((resolve, reject) => {
    let out = ''
    c.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(out.trim())
    })
    c.on('exit', (code) => reject(new Error(`child exited ${code}`)))
  })
}
function cleanup () { for (const c of children) { try { process.kill(c.pid, 'SIGKILL') } catch {} } }
process.on('exit', cleanup)
process.on('SIGINT', () => { cleanup(); process.exit(130) })

/** Runs `one()` from `c` loops for the time given; returns req/s and latency percentiles. */
async function drive (c, one) {
  const end0 = Date.now() + WARMUP_MS
  const loop = async (until, hist) => {
    while (Date.now() < until) {
      const t = process.hrtime.bigint()
      await one()
      if (hist) hist.recordValue(Number(process.hrtime.bigint() - t) / 1000)
    }
  }
  await Promise.all(Array.from({ length: c }, () => loop(end0, null)))
  const hist = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60e6, numberOfSignificantValueDigits: 3 })
  const t0 = Date.now()
  await Promise.all(Array.from({ length: c }, () => loop(t0 + SECONDS * 1000, hist)))
  const secs = (Date.now() - t0) / 1000
  return {
    rps: Math.round(hist.totalCount / secs),
    p50: hist.getValueAtPercentile(50) / 1000,
    p99: hist.getValueAtPercentile(99) / 1000,
  }
}

/** Raw zeromq.js Dealer with one writer queue and one reader, matching replies by id. */
async function rawClient (endpoint) {
  const sock = new zmq.Dealer({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  sock.connect(endpoint)
  const pending = new Map()
  let nextId = 0
  const queue = []
  let writing = false
  const body = Buffer.from(JSON.stringify(PAYLOAD))
  async function write () {
    writing = true
    while (queue.length > 0) await sock.send(queue.shift())
    writing = false
  }
  ;(async () => {
    try { for await (const [id] of sock) { const r = pending.get(id.readUInt32LE(0)); pending.delete(id.readUInt32LE(0)); r() } } catch {}
  })()
  return {
    one: () => new Promise((resolve) => {
      const id = nextId++ >>> 0
      const idb = Buffer.allocUnsafe(4); idb.writeUInt32LE(id)
      pending.set(id, resolve)
      queue.push([idb, body])
      if (!writing) write()
    }),
    close: () => sock.close(),
  }
}

const results = []
const rawEp = await child([fileURLToPath(new URL('./raw-echo-server.js', import.meta.url))])
const peerEp = await child([fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url)), 'peer'])
const raw = await rawClient(rawEp)
const client = new Client({ seeds: [peerEp], timeout: 30000 })
await client.request('echo', PAYLOAD)
for (const c of LEVELS) {
  const r = await drive(c, raw.one)
  const z = await drive(c, () => client.request('echo', PAYLOAD))
  results.push({ concurrency: c, raw: r, zeromesh: z, ratio: +(z.rps / r.rps).toFixed(2) })
  if (!values.json) {
    console.error(`C=${c}: raw ${r.rps} req/s p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms | zeromesh ${z.rps} req/s p50 ${z.p50.toFixed(2)} p99 ${z.p99.toFixed(2)} ms | ratio ${(z.rps / r.rps).toFixed(2)}`)
  }
}
raw.close()
await client.close()
cleanup()
const report = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, seconds: SECONDS, results }
console.log(JSON.stringify(report, null, values.json ? 0 : 2))
process.exit(0)
