// What membership costs each peer as the cluster grows, in one sitting (issue 73): for each
// size, H host processes of P embedded peers each (bench/cluster/lab/host.js, CURVE on), started
// at once on loopback and joining through 3 seeds; once every peer sees every other, a quiet
// window measures per peer: CPU (the host processes' user + system time over their peers),
// gossip bytes sent, membership connections held, RSS. Also the cold start: time to converge,
// connections opened and deaths declared (every peer stays up, so any death is false).
// Sizes run one after the other, never at once; ratios are against the first size.
//
//   node bench/cluster/membership-cost.js [--hosts 3,6,12] [--peers 10] [--rest 20] [--json]
//
// Loopback, not the lab's namespaces (no root needed); `sudo npm run lab` measures the same
// at rest in its idle phase, with clients.
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import zmq from 'zeromq'
import { LabProc } from './lab/proc.js'

const { values: o } = parseArgs({
  options: {
    hosts: { type: 'string', default: '3,6,12' },
    peers: { type: 'string', default: '10' },
    rest: { type: 'string', default: '20' }, //     seconds of the quiet window
    settle: { type: 'string', default: '10' }, //   seconds after convergence before it
    json: { type: 'boolean', default: false },
  },
})
const P = Number(o.peers)
const HOST_JS = fileURLToPath(new URL('./lab/host.js', import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (...a) => process.stderr.write(`[cost] ${a.join(' ')}\n`)

async function measure (H) {
  const N = H * P
  // Ports below Linux's ephemeral range (32768+), away from the connections' own ports.
  const base = 10000 + Math.floor(Math.random() * (22000 - N))
  const cluster = zmq.curveKeyPair()
  const clientKeys = zmq.curveKeyPair()
  const seeds = [0, 1, 2].slice(0, H).map((h) => `tcp://127.0.0.1:${base + h * P}`)
  const t0 = Date.now()
  const hosts = Array.from({ length: H }, (_, h) => {
    const config = { address: '127.0.0.1', peers: P, basePort: base + h * P, zone: 'abc'[h % 3], seeds, security: { clusterKey: cluster.secretKey, allow: [clientKeys.publicKey] } }
    return new LabProc(spawn(process.execPath, [HOST_JS, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] }), `host ${h + 1}`)
  })
  try {
    await Promise.all(hosts.map((h) => h.ready(60000)))
    let convergedMs = null
    while (Date.now() - t0 < 120000) {
      const views = (await Promise.all(hosts.map((h) => h.ask('view', {}, 30000)))).flatMap((v) => v.peers)
      if (views.every((v) => v.alive.length === N)) { convergedMs = Date.now() - t0; break }
      await sleep(250)
    }
    log(`${N} peers: ${convergedMs === null ? 'did not converge within 120 s' : `converged in ${convergedMs} ms`}`)
    await sleep(Number(o.settle) * 1000)
    const stats = () => Promise.all(hosts.map((h) => h.ask('stats', {}, 30000)))
    const before = await stats()
    const from = Date.now()
    await sleep(Number(o.rest) * 1000)
    const after = await stats()
    const seconds = (Date.now() - from) / 1000
    let cpu = 0; let bytes = 0; let rss = 0; let connections = 0; let opened = 0; let deaths = 0
    for (let i = 0; i < H; i++) {
      cpu += (after[i].cpu.user + after[i].cpu.system - before[i].cpu.user - before[i].cpu.system) / 1000
      rss += after[i].rss
      for (let j = 0; j < P; j++) {
        const a = after[i].peers[j].membership
        bytes += a.gossipBytes - before[i].peers[j].membership.gossipBytes
        connections += a.connections
        opened += before[i].peers[j].membership.connectionsOpened
        deaths += a.died
      }
    }
    return {
      members: N,
      convergedS: convergedMs === null ? null : +(convergedMs / 1000).toFixed(1),
      coldOpenedPerPeer: +(opened / N).toFixed(1),
      deaths,
      cpuMsPerS: +(cpu / seconds / N).toFixed(2),
      bytesPerS: Math.round(bytes / seconds / N),
      connections: +(connections / N).toFixed(1),
      rssMB: +(rss / N / 1048576).toFixed(1),
    }
  } finally {
    for (const h of hosts) h.tell('stop')
    await Promise.race([Promise.all(hosts.map((h) => h.exited)), sleep(10000)])
    await Promise.all(hosts.map((h) => h.kill()))
  }
}

const rows = []
for (const H of o.hosts.split(',').map(Number)) rows.push(await measure(H))
const first = rows[0]
const x = (r, k) => (first[k] > 0 ? (r[k] / first[k]).toFixed(2) + 'x' : '')
const text = [
  `membership cost per peer, ${P} peers a host process, loopback, CURVE; ${new Date().toISOString().slice(0, 10)}, Node ${process.version}`,
  '',
  '| members | converged (s) | connections opened in the cold start | deaths | CPU ms/s | bytes/s | connections held | RSS MB |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => `| ${r.members} | ${r.convergedS ?? 'no'} | ${r.coldOpenedPerPeer} | ${r.deaths} | ${r.cpuMsPerS} (${x(r, 'cpuMsPerS')}) | ${r.bytesPerS} (${x(r, 'bytesPerS')}) | ${r.connections} | ${r.rssMB} |`),
].join('\n')
process.stdout.write((o.json ? JSON.stringify(rows) : text) + '\n')
