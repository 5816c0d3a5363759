// What a host process does while it starts into a running mesh (issue 73): H - 1 host processes
// of P embedded peers (bench/cluster/lab/host.js, CURVE on) on loopback converge, then one more
// starts, with --cpu-prof when --prof-dir is given; its time to serve, its loop's worst delay
// until then and 10 s after, and the deaths of its members the others declared are printed.
//
//   node bench/cluster/restart-profile.js [--hosts 12] [--peers 10] [--prof-dir DIR]
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import zmq from 'zeromq'
import { LabProc } from './lab/proc.js'

const { values: o } = parseArgs({ options: { hosts: { type: 'string', default: '12' }, peers: { type: 'string', default: '10' }, 'prof-dir': { type: 'string' } } })
const H = Number(o.hosts)
const P = Number(o.peers)
const HOST_JS = fileURLToPath(new URL('./lab/host.js', import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (...a) => process.stderr.write(`[restart] ${a.join(' ')}\n`)

const base = 10000 + Math.floor(Math.random() * (22000 - H * P))
const cluster = zmq.curveKeyPair()
const clientKeys = zmq.curveKeyPair()
const seeds = [0, 1, 2].map((h) => `tcp://127.0.0.1:${base + h * P}`)
const configOf = (h) => ({ address: '127.0.0.1', peers: P, basePort: base + h * P, zone: 'abc'[h % 3], seeds, security: { clusterKey: cluster.secretKey, allow: [clientKeys.publicKey] } })
const start = (h, args = []) => new LabProc(spawn(process.execPath, [...args, HOST_JS, JSON.stringify(configOf(h))], { stdio: ['pipe', 'pipe', 'pipe'] }), `host ${h + 1}`)
const hosts = Array.from({ length: H - 1 }, (_, h) => start(h))
let last = null
try {
  await Promise.all(hosts.map((h) => h.ready(60000)))
  const t0 = Date.now()
  const views = async () => (await Promise.all(hosts.map((h) => h.ask('view', {}, 30000)))).flatMap((v) => v.peers)
  while (Date.now() - t0 < 120000 && !(await views()).every((v) => v.alive.length === (H - 1) * P)) await sleep(250)
  log(`${(H - 1) * P} peers converged in ${Date.now() - t0} ms; 10 s of rest`)
  await sleep(10000)
  for (const h of hosts) await h.ask('deaths', {}, 30000)
  const began = Date.now()
  last = start(H - 1, o['prof-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${o['prof-dir']}`] : [])
  await last.ready(120000)
  const servingMs = Date.now() - began
  const atReady = await last.ask('stats', {}, 30000)
  await sleep(10000)
  const later = await last.ask('stats', {}, 30000)
  let deaths = 0
  const mine = new Set(Array.from({ length: P }, (_, i) => `tcp://127.0.0.1:${base + (H - 1) * P + i}`))
  for (const h of hosts) deaths += (await h.ask('deaths', {}, 30000)).deaths.filter((d) => mine.has(d.endpoint)).length
  process.stdout.write(JSON.stringify({ members: H * P, servingMs, lagMaxAtReadyMs: atReady.lagMaxMs, lagMax10sLaterMs: later.lagMaxMs, cpuMsToReady: (atReady.cpu.user + atReady.cpu.system) / 1000, deathsOfItsMembers: deaths }) + '\n')
} finally {
  for (const h of [...hosts, last].filter(Boolean)) h.tell('stop')
  await Promise.race([Promise.all([...hosts, last].filter(Boolean).map((h) => h.exited)), sleep(15000)])
  await Promise.all([...hosts, last].filter(Boolean).map((h) => h.kill()))
}
