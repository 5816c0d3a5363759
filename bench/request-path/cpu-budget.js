// What one request costs the machine, all of it: the CPU time of the client process and the
// server process (every thread, ZeroMQ's I/O threads included) per answered request, for the
// raw clients (one message per request; 32 per frame, non-blocking), the latter doing
// MessagePack at both ends, and zeromesh with an object payload and with the same bytes as a
// Buffer. Every system runs at the same
// concurrency, in turn, round after round; medians of the rounds.
//
// Throughput is at most the cores divided by the CPU per request (2 cores, and 4 busy
// threads, here), and reaches that only if every core is busy all the time; "cores busy"
// says how close each system gets. So this says what a throughput target against a raw
// client leaves for everything zeromesh does per request: at 0.9x of R req/s on 2 cores, at
// most 2 / (0.9 R) seconds of CPU per request, less the raw client's own.
//
// Usage: node bench/request-path/cpu-budget.js [--concurrency 256] [--seconds 3] [--rounds 3]
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { Client } from '../../index.js'
import { child, drive, PAYLOAD, rawClient, rawClientNonBlocking } from '../../bin/bench/harness.js'

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '256' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
  },
})
const C = Number(values.concurrency)
const SECONDS = Number(values.seconds)
const ROUNDS = Number(values.rounds)
const here = (p) => fileURLToPath(new URL(p, import.meta.url))
const TICK_MS = 1000 / 100 // /proc/PID/stat counts in clock ticks (USER_HZ, 100 on Linux)

/** CPU ms a child process has used, all its threads, from /proc. */
function cpuMsOf (pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS // utime, stime
}
const ownCpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

const peer = await child([here('../../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0'])
const rawServer = await child([here('../../bin/bench/raw-echo-server.js')])
const rawMpServer = await child([here('../../bin/bench/raw-echo-server.js'), 'msgpack'])
const client = new Client({ seeds: [peer.line], timeout: 30000 })
const raw1 = rawClient(rawServer.line, 1, PAYLOAD)
const raw = rawClientNonBlocking(rawServer.line, 32, PAYLOAD)
const rawMp = rawClientNonBlocking(rawMpServer.line, 32, PAYLOAD, { msgpack: true })
const BYTES = Buffer.from(JSON.stringify(PAYLOAD)) // what the raw clients send
const systems = [
  { name: 'raw zeromq.js, one message per request', server: rawServer, one: () => raw1.one() },
  { name: 'raw zeromq.js, 32 per frame, non-blocking', server: rawServer, one: () => raw.one() },
  { name: 'raw + msgpackr both ends, 32 per frame', server: rawMpServer, one: () => rawMp.one() },
  { name: 'zeromesh, object payload', server: peer, one: () => client.request('echo', PAYLOAD) },
  { name: 'zeromesh, the same bytes as a Buffer', server: peer, one: () => client.request('echo', BYTES) },
]
for (const s of systems) { await s.one(); s.runs = [] }

for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? systems : [...systems].reverse()
  for (const s of order) {
    await drive(C, s.one, { seconds: 0.5, warmupMs: 0 })
    const c0 = ownCpuMs(); const s0 = cpuMsOf(s.server.child.pid)
    const t0 = process.hrtime.bigint()
    const res = await drive(C, s.one, { seconds: SECONDS, warmupMs: 0 })
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6
    const clientMs = ownCpuMs() - c0; const serverMs = cpuMsOf(s.server.child.pid) - s0
    const n = res.rps * wallMs / 1000
    s.runs.push({ rps: res.rps, p50: res.p50, p99: res.p99, clientUs: clientMs * 1000 / n, serverUs: serverMs * 1000 / n, cores: (clientMs + serverMs) / wallMs })
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const m = (s, k) => median(s.runs.map((x) => x[k]))
const bases = systems.slice(0, 2)
console.log(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; ${C} in flight, medians of ${ROUNDS} rounds of ${SECONDS} s`)
console.log('')
console.log('| system | req/s | p50 ms | p99 ms | client CPU us per request | server CPU us per request | both | cores busy | ' + bases.map((b, i) => `req/s, CPU per request vs raw ${i === 0 ? 'one message' : '32 per frame'}`).join(' | ') + ' |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const s of systems) {
  const both = (x) => x.clientUs + x.serverUs
  const versus = bases.map((b) => {
    const rps = median(s.runs.map((x, i) => x.rps / b.runs[i].rps))
    const cpu = median(s.runs.map((x, i) => both(x) / both(b.runs[i])))
    return `${rps.toFixed(2)}x, ${cpu.toFixed(2)}x`
  })
  console.log(`| ${s.name} | ${Math.round(m(s, 'rps')).toLocaleString('en-US')} | ${m(s, 'p50').toFixed(3)} | ${m(s, 'p99').toFixed(2)} | ${m(s, 'clientUs').toFixed(2)} | ${m(s, 'serverUs').toFixed(2)} | ${median(s.runs.map(both)).toFixed(2)} | ${m(s, 'cores').toFixed(2)} | ${versus.join(' | ')} |`)
}

await client.close(); raw1.close(); raw.close(); rawMp.close()
for (const c of [peer, rawServer, rawMpServer]) c.child.kill('SIGKILL')
process.exit(0)
