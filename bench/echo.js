// Small request/reply through zeromesh (Client -> Peer) against, in the same run:
//   raw      zeromq.js Dealer -> Router echo, one ZeroMQ message per request
//   raw x32  the same with the requests of one turn coalesced, up to 32 per message
//   broker   a zeromq Proxy (ROUTER/DEALER) in front of 2 echo workers, one message per request
// Servers in child processes, clients in this one. These machines are noisy, so each
// concurrency runs `--rounds` rounds with the systems in turn, and the medians are reported.
// Usage: node bench/echo.js [--seconds 2] [--rounds 3] [--concurrency 1,16,256]
//        [--systems raw,raw-x32,broker,zeromesh] [--json]
// (--systems raw,zeromesh with many short rounds is the quicker A/B for latency at 1 in flight)
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import { Client } from '../index.js'
import { child, drive, rawClient, killChildren, PAYLOAD } from './harness.js'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'boolean' },
    concurrency: { type: 'string', default: '1,16,256' },
    systems: { type: 'string', default: 'raw,raw-x32,broker,zeromesh' },
  },
})
const WANTED = new Set(values.systems.split(','))
for (const name of WANTED) {
  if (!['raw', 'raw-x32', 'broker', 'zeromesh'].includes(name)) throw new Error(`--systems: unknown system ${name} (raw, raw-x32, broker, zeromesh)`)
}
if (!WANTED.has('raw') || !WANTED.has('zeromesh')) throw new Error('--systems must include raw and zeromesh (the ratios are zeromesh / raw)')
const SECONDS = Number(values.seconds)
const ROUNDS = Number(values.rounds)
const LEVELS = values.concurrency.split(',').map(Number)
const here = (f) => fileURLToPath(new URL(f, import.meta.url))

const raw = rawClient((await child([here('./raw-echo-server.js')])).line)
const rawX32 = WANTED.has('raw-x32') ? rawClient((await child([here('./raw-echo-server.js')])).line, 32) : null
const broker = WANTED.has('broker') ? rawClient((await child([here('./broker.js'), '2'])).line) : null
// --threads 0: echo on the peer's main thread, so this measures the request path, not a thread hop
const peerEp = (await child([here('../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0'])).line
const client = new Client({ seeds: [peerEp], timeout: 30000 })
await client.request('echo', PAYLOAD)
const systems = [
  { name: 'raw', one: raw.one },
  rawX32 && { name: 'raw x32', one: rawX32.one },
  broker && { name: 'broker', one: broker.one },
  { name: 'zeromesh', one: () => client.request('echo', PAYLOAD) },
].filter(Boolean)

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const results = []
for (const c of LEVELS) {
  const runs = new Map(systems.map((s) => [s.name, []]))
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of systems) runs.get(s.name).push(await drive(c, s.one, { seconds: SECONDS }))
  }
  const row = { concurrency: c }
  for (const [name, rs] of runs) {
    row[name] = { rps: Math.round(median(rs.map((x) => x.rps))), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)), rounds: rs.map((x) => x.rps) }
  }
  const vs = (name) => row[name] === undefined ? null : +(row.zeromesh.rps / row[name].rps).toFixed(2)
  row.ratio = {
    rpsVsRaw: vs('raw'),
    rpsVsRawX32: vs('raw x32'),
    rpsVsBroker: vs('broker'),
    p50VsRaw: +(row.zeromesh.p50 / row.raw.p50).toFixed(2),
    p99VsRaw: +(row.zeromesh.p99 / row.raw.p99).toFixed(2),
  }
  results.push(row)
  if (!values.json) {
    const cell = (x) => `${String(x.rps).padStart(7)} req/s p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)}`
    console.error(`C=${c} (medians of ${ROUNDS} x ${SECONDS} s)`)
    for (const s of systems) console.error(`  ${s.name.padEnd(9)} ${cell(row[s.name])}   rounds: ${row[s.name].rounds.join(', ')}`)
    const others = [['raw x32', row.ratio.rpsVsRawX32], ['broker', row.ratio.rpsVsBroker]].filter(([, r]) => r !== null).map(([n, r]) => `; / ${n}: ${r}x`).join('')
    console.error(`  zeromesh / raw: ${row.ratio.rpsVsRaw}x req/s, ${row.ratio.p50VsRaw}x p50, ${row.ratio.p99VsRaw}x p99${others}`)
  }
}
raw.close(); rawX32?.close(); broker?.close()
await client.close()
killChildren()
const report = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, seconds: SECONDS, rounds: ROUNDS, results }
console.log(JSON.stringify(report, null, values.json ? 0 : 2))
process.exit(0)
