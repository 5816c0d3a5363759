// One host of the lab (bench/cluster/lab.js), run inside its network namespace: P embedded
// `Peer`s in one process, each bound at the host's address on a port of its own, labelled with
// the host's zone. One process per host, not one per peer: an idle `zeromesh peer` process
// holds about 100 MB (a Node runtime each), 120 of them 12 GB, and 120 event loops on 2 cores
// would measure the scheduler, not zeromesh. Peers in one process share its runtime and its
// loop, as the peers of one pod would share a node's CPU.
//
//   node bench/cluster/lab/host.js '{"address":"10.213.0.1","peers":10,"basePort":5555,"zone":"a","seeds":[...],...}'
//
// Prints one JSON line once every peer serves ({ ready, endpoints }), then answers each JSON
// line on stdin ({ id, cmd }) with one line ({ id, ... }): `view` (each peer's member list),
// `deaths` (the members its peers declared dead since the last ask, with when),
// `stats` (requests and events each peer handled, replies it dropped by reason, the process's CPU and memory), `stop`
// (every peer drains and leaves, then the process exits 0). stdin closed: it stops too.
import { createInterface } from 'node:readline'
import { Peer } from '../../../index.js'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const lag = monitorEventLoopDelay({ resolution: 10 }) // how late this host's loop ran, for the lab's figures
lag.enable()

const config = JSON.parse(process.argv[2])
const security = config.security ? { clusterKey: config.security.clusterKey, allow: config.security.allow } : undefined

function peerAt (i) {
  const endpoint = `tcp://${config.address}:${config.basePort + i}`
  return new Peer({
    bind: endpoint,
    seeds: config.seeds.filter((s) => s !== endpoint),
    labels: { zone: config.zone },
    security,
    dns: config.dns,
    handlers: {
      // A little work, and who did it: the lab counts where requests went from the answers.
      work: () => endpoint,
      order: () => endpoint,
    },
    events: { 'lab.tick': { group: 'lab', handler: () => {} } },
    ...(config.membership ? { membership: config.membership } : {}), // membership options (the slow-host bench turns local health off)
  })
}

const peers = Array.from({ length: config.peers }, (_, i) => peerAt(i))
// Every member this host's peers declared dead, and when (wall clock: every lab process runs
// on one machine): the lab tells a death it caused from a false one.
let deaths = []
for (const p of peers) p.on('member', (m) => { if (m.state === 'dead') deaths.push({ viewer: p.endpoint, endpoint: m.endpoint, incarnation: m.incarnation, at: Date.now() }) })
const endpoints = await Promise.all(peers.map((p) => p.start()))
process.stdout.write(JSON.stringify({ ready: true, endpoints, pid: process.pid }) + '\n')

let stopping = null
function stop () {
  stopping ??= Promise.all(peers.map((p) => p.stop())).then(() => process.exit(0))
  return stopping
}

const answers = {
  deaths: () => { const out = deaths; deaths = []; return { deaths: out } },
  view: () => ({
    peers: peers.map((p) => {
      const alive = []
      const dead = []
      for (const m of p.members()) (m.state === 'alive' || m.state === 'suspect' ? alive : dead).push(m.endpoint)
      return { endpoint: p.endpoint, alive, dead, ready: p.ready }
    }),
  }),
  stats: () => {
    const m = process.memoryUsage()
    return {
      peers: peers.map((p) => { const s = p.stats(); return { endpoint: p.endpoint, requests: s.requests, events: s.events?.handled ?? 0, membership: s.membership, refused: s.security.refused, handshakeFailures: s.security.handshakeFailures, drops: s.drops } }),
      cpu: process.cpuUsage(),
      lagMaxMs: lag.max / 1e6,
      lagP99Ms: lag.percentile(99) / 1e6,
      rss: m.rss,
      heapUsed: m.heapUsed,
    }
  },
}

createInterface({ input: process.stdin }).on('line', async (line) => {
  const q = JSON.parse(line)
  if (q.cmd === 'stop') { await stop(); return }
  process.stdout.write(JSON.stringify({ id: q.id, ...answers[q.cmd]() }) + '\n')
}).on('close', () => stop())
