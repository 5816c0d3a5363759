// A flood of CURVE handshakes with random client keys from one address (127.0.0.2) against a
// secured `zeromesh peer`, while a legitimate client on another address (127.0.0.1) sends
// requests one at a time: its p50/p99, the peer's open descriptors, and what the peer refused.
// A quiet phase first (the baseline, same run), then the flood. The attacker is a process of
// its own, opening `--rate` connections a second, each with a fresh keypair, closing each
// `--hold` ms later (or when refused).
//
// `--raw`: plain TCP connections that never start a handshake instead (held until the peer
// closes them, its handshake timeout): what the kernel, not the peer, has to cap.
//
// Usage: node bench/cluster/handshake-flood.js [--rate 1000] [--seconds 8] [--hold 100] [--raw]
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Client } from '../../index.js'
import { newKeyPair } from '../../transport/keys.js'

const { values } = parseArgs({ options: { rate: { type: 'string', default: '1000' }, seconds: { type: 'string', default: '8' }, hold: { type: 'string', default: '100' }, raw: { type: 'boolean', default: false } } })
const RATE = Number(values.rate)
const SECONDS = Number(values.seconds)
const HOLD = Number(values.hold)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-flood-'))
const cluster = newKeyPair()
const alice = newKeyPair()
fs.writeFileSync(path.join(dir, 'cluster.key'), cluster.secretKey, { mode: 0o600 })
fs.writeFileSync(path.join(dir, 'alice.pub'), alice.publicKey)

const children = []
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL') } catch {} } fs.rmSync(dir, { recursive: true, force: true }) })

const peer = spawn(process.execPath, [path.join(ROOT, 'bin', 'zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0', '--bind', 'tcp://127.0.0.1:0',
  '--cluster-key', path.join(dir, 'cluster.key'), '--allow', path.join(dir, 'alice.pub'), '--log-level', 'error'], { stdio: ['ignore', 'pipe', 'inherit'] })
children.push(peer)
const endpoint = await new Promise((resolve) => peer.stdout.once('data', (d) => resolve(d.toString().trim())))
const port = endpoint.split(':').pop()
const fds = () => { try { return fs.readdirSync(`/proc/${peer.pid}/fd`).length } catch { return NaN } }

const client = new Client({ seeds: [endpoint], security: { clusterPublicKey: cluster.publicKey, secretKey: alice.secretKey }, timeout: 5000 })
await client.request('echo', 'warm')

/** Requests one at a time for `ms`: sorted latencies (ms), failures, and the most descriptors seen. */
async function phase (ms) {
  const lat = []
  let failed = 0
  let maxFds = fds()
  const sampler = setInterval(() => { maxFds = Math.max(maxFds, fds()) }, 50)
  const end = Date.now() + ms
  while (Date.now() < end) {
    const t0 = process.hrtime.bigint()
    try { await client.request('echo', 'x') } catch { failed++ }
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6)
    await delay(2) // about 400 a second: a steady client, not a saturating one
  }
  clearInterval(sampler)
  lat.sort((a, b) => a - b)
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]
  return { n: lat.length, p50: q(0.5), p99: q(0.99), max: lat[lat.length - 1], failed, maxFds }
}

const quiet = await phase(SECONDS * 1000)

// The attacker: its own process, so its CPU is not the client's.
const attackerCode = `
import * as zmq from 'zeromq'
import net from 'node:net'
const [port, serverKey, rate, hold, raw] = process.argv.slice(1)
let opened = 0
const perTick = Math.max(1, Math.round(Number(rate) / 1000))
setInterval(() => {
  for (let i = 0; i < perTick; i++) {
    if (raw === 'raw') {
      const c = net.connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.2' })
      c.on('error', () => {}); c.on('close', () => c.destroy())
      opened++
      continue
    }
    const k = zmq.curveKeyPair()
    const s = new zmq.Dealer({ linger: 0, curveServerKey: serverKey, curvePublicKey: k.publicKey, curveSecretKey: k.secretKey, reconnectInterval: 60000 })
    s.connect('tcp://127.0.0.2:0;127.0.0.1:' + port)
    opened++
    setTimeout(() => s.close(), Number(hold))
  }
}, 1)
setInterval(() => process.stdout.write(opened + '\\n'), 1000)
`
const attacker = spawn(process.execPath, ['--input-type=module', '-e', attackerCode, port, cluster.publicKey, String(RATE), String(HOLD), values.raw ? 'raw' : 'curve'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
children.push(attacker)
let opened = 0
attacker.stdout.on('data', (d) => { opened = Number(d.toString().trim().split('\n').pop()) })
await delay(1000) // the flood under way
const flood = await phase(SECONDS * 1000)
attacker.kill('SIGKILL')
await client.close()
peer.kill('SIGTERM')

const row = (name, r) => `| ${name} | ${r.n} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.failed} | ${r.maxFds} |`
console.log(values.raw
  ? `connection flood: ${RATE}/s plain TCP from 127.0.0.2 that never handshakes; attacker opened ${opened} in ${SECONDS + 1} s`
  : `handshake flood: ${RATE}/s from 127.0.0.2 with random keys, each held ${HOLD} ms; attacker opened ${opened} in ${SECONDS + 1} s`)
console.log('| phase | requests | p50 ms | p99 ms | max ms | failed | peer fds (max) |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
console.log(row('quiet', quiet))
console.log(row('flood', flood))
process.exit(0)
