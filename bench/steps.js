// Where one round trip goes at 1 in flight: zeromesh against raw zeromq.js with msgpackr at
// both ends (the MessagePack work zeromesh does), measured in turn, round after round.
// For each system and each process's main thread and ZeroMQ I/O thread, per request: CPU,
// time spent runnable but waiting for a CPU, and preemptions (bench/proc-threads.js); for
// zeromesh, the wall-clock time of each step on both main threads (the client's here, the
// peer's in its child through bench/steps-peer.js). Steps nest: a step's time includes the
// steps under it. Medians of the rounds.
// Usage: node bench/steps.js [--rounds 5] [--seconds 2]
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Client } from '../index.js'
import { child, drive, median, PAYLOAD, rawClientNonBlocking, killChildren } from './harness.js'
import { timeCalls } from './steps-timing.js'
import { mainAndIo as threads } from './proc-threads.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '2' } } })
const ROUNDS = Number(values.rounds)
const SECONDS = Number(values.seconds)
const here = (f) => fileURLToPath(new URL(f, import.meta.url))

const dir = mkdtempSync(join(tmpdir(), 'zeromesh-steps-'))
const peerOut = join(dir, 'peer.json')
process.env.ZEROMESH_STEPS_OUT = peerOut
const peer = await child(['--import', here('./steps-peer.js'), here('../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0', '--log-level', 'silent'])
const client = new Client({ seeds: [peer.line], timeout: 30000 })
await client.request('echo', PAYLOAD)
const rawServer = await child([here('./raw-echo-server.js'), 'msgpack'])
const raw = rawClientNonBlocking(rawServer.line, 32, PAYLOAD, { msgpack: true })
await raw.one()

const steps = {}
timeCalls(steps, client, 'onMessage', 'reply in: decoded, settled, the caller resumed')
timeCalls(steps, client.attempts, 'onReplies', '  its answer: measured, settled')
const requests = timeCalls(steps, client, 'request', 'request(): checked, routed, packed, sent')
timeCalls(steps, client.attempts, 'attempt', '  the attempt: packed, sent')
timeCalls(steps, client.transport, 'send', '    ZeroMQ send (native)')

/** The peer's step totals since the last call, from its preload. */
async function peerSteps () {
  rmSync(peerOut, { force: true })
  process.kill(peer.child.pid, 'SIGUSR2')
  for (let i = 0; i < 200; i++) {
    try { return JSON.parse(readFileSync(peerOut, 'utf8')) } catch { await new Promise((resolve) => setTimeout(resolve, 10)) }
  }
  throw new Error('the peer wrote no steps within 2 s')
}

const systems = [
  { name: 'zeromesh', one: () => client.request('echo', PAYLOAD), pids: [process.pid, peer.child.pid] },
  { name: 'raw + msgpackr both ends', one: raw.one, pids: [process.pid, rawServer.child.pid] },
]
for (const s of systems) await drive(1, s.one, { seconds: 1 }) // both warm before either is measured
const per = new Map() // row -> us per request, one value a round
const add = (row, v) => { if (!per.has(row)) per.set(row, []); per.get(row).push(v) }
for (let r = 0; r < ROUNDS; r++) {
  for (const s of (r % 2 === 0 ? systems : [...systems].reverse())) {
    await drive(1, s.one, { seconds: 0.3 }) // the switch from the other system
    for (const v of Object.values(steps)) { v.calls = 0; v.ns = 0 }
    if (s.name === 'zeromesh') await peerSteps()
    const [c0, p0] = s.pids.map(threads)
    const res = await drive(1, s.one, { seconds: SECONDS, warmupMs: 0 })
    const [c1, p1] = s.pids.map(threads)
    const n = res.rps * SECONDS
    add(`${s.name}|round trip (1 / req/s)`, 1e6 / res.rps)
    for (const [side, before, after] of [['client', c0, c1], ['server', p0, p1]]) {
      for (const [thread, label] of [['main', 'main thread'], ['io', 'ZeroMQ I/O thread']]) {
        const d = (k) => (after[thread][k] - before[thread][k]) / n
        add(`${s.name}|CPU: ${side} ${label}`, d('cpuUs'))
        add(`${s.name}|waiting for a CPU: ${side} ${label}`, d('waitUs'))
        add(`${s.name}|preempted (times a request): ${side} ${label}`, d('preempted'))
      }
    }
    if (s.name !== 'zeromesh') continue
    for (const [label, v] of Object.entries(steps)) add(`zeromesh steps, client|${label}`, v.ns / 1000 / requests.calls)
    const ps = await peerSteps()
    for (const [label, v] of Object.entries(ps.steps)) add(`zeromesh steps, peer|${label}`, v.ns / 1000 / ps.requests)
  }
}

console.log(`1 in flight, ${ROUNDS} rounds of ${SECONDS} s, us per request (median of the rounds)\n`)
console.log('| system | what | us |')
console.log('| --- | --- | ---: |')
for (const [row, xs] of per) {
  const [system, what] = row.split('|')
  console.log(`| ${system} | ${what.replace(/^ +/, (sp) => '&nbsp;'.repeat(sp.length))} | ${median(xs).toFixed(2)} |`)
}
await client.close()
raw.close()
killChildren()
rmSync(dir, { recursive: true, force: true })
