// Subsetting at scale in the whole-system simulation (sim/system.js): N peers and
// N clients (1,000 each by default), the default subset (32), with the assertions of
// test/sim/subsets.test.js: connections per client at most the subset, the busiest peer's load
// (p99 over peers) at most 1.6x the mean, and a peer's death moving at most 2% of the
// connections beyond its own. Prints the measures beside the binomial expectation of random
// subsets, and exits 1 when an assertion fails.
//
//   node bench/cluster/subsets.js [--peers 1000] [--clients 1000] [--seconds 5] [--seed 1]
import { parseArgs } from 'node:util'
import { SystemSim } from '../../sim/system.js'
import { connections, clientsPerPeer, quantile, loadPerPeer, binomialSpread } from '../../sim/subset-measure.js'
import { clientDefaults } from '../../client/options.js'
import { insideOf } from '../../client/client.js'

const { values } = parseArgs({ options: { peers: { type: 'string', default: '1000' }, clients: { type: 'string', default: '1000' }, seconds: { type: 'string', default: '5' }, seed: { type: 'string', default: '1' } } })
const PEERS = Number(values.peers)
const CLIENTS = Number(values.clients)
const SUBSET = clientDefaults.subset
const t0 = Date.now()
const say = (m) => process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${m}\n`)

// Peers probe and sync less often than the defaults, so a thousand of them in one process
// leave time for the requests: membership is not what this measures.
const s = new SystemSim({
  seed: Number(values.seed), peers: PEERS, clients: CLIENTS, inflight: 1, think: 100,
  membership: { probeInterval: 1000, probeTimeout: 500, pushPullInterval: 10000 },
  client: { refreshInterval: 2000 },
})
let ok = true
const check = (cond, what) => { say(`${cond ? 'ok  ' : 'FAIL'} ${what}`); if (!cond) ok = false }
try {
  say(`starting ${PEERS} peers and ${CLIENTS} clients (subset ${SUBSET})`)
  await s.start()
  await s.run(8000)
  const perClient = s.clients.map((c) => insideOf(c).mesh.table.entries.size)
  check(Math.max(...perClient) <= SUBSET, `connections per client: at most ${Math.max(...perClient)}, at least ${Math.min(...perClient)} (subset ${SUBSET}); ${perClient.reduce((a, b) => a + b, 0)} in all`)
  const load = [...(await loadPerPeer(s, Number(values.seconds) * 1000)).values()]
  const mean = load.reduce((a, b) => a + b, 0) / load.length
  const p99 = quantile(load, 0.99)
  const expected = binomialSpread(CLIENTS, PEERS, SUBSET)
  const cpp = quantile([...clientsPerPeer(s).values()], 0.99) / (CLIENTS * SUBSET / PEERS)
  check(p99 / mean <= 1.6, `load per peer over ${values.seconds} s: mean ${mean.toFixed(0)}, p99 ${p99} (${(p99 / mean).toFixed(2)}x the mean); clients per peer p99 ${cpp.toFixed(2)}x the mean, binomial(${CLIENTS}, ${SUBSET}/${PEERS}) predicts ${expected.ratio.toFixed(2)}x`)
  check(s.counts.failed === 0, `failed requests: ${s.counts.failed} of ${s.counts.ok + s.counts.failed}`)
  const before = connections(s)
  const dead = s.endpoints[7]
  const own = [...before].filter((k) => k.endsWith(`|${dead}`)).length
  s.kill(dead)
  await s.run(20000)
  const after = connections(s)
  const dropped = [...before].filter((k) => !after.has(k)).length
  const added = [...after].filter((k) => !before.has(k)).length
  check(dropped - own <= 0.02 * before.size && added - own <= 0.02 * before.size, `a death: ${own} of ${before.size} connections were to the dead peer; ${dropped - own} others dropped, ${added} made`)
} finally {
  await s.stop()
}
say(ok ? 'PASS' : 'FAIL')
process.exit(ok ? 0 : 1)
