// The cost of routing a request (client/routing.js, client/zone.js, the p2c strategy) with 10,
// 100 and 1,000 peers that serve 50 methods each: the pick of every request (the candidates
// of its method from the router's cache, then p2c), the same with a zone, the same with a
// version range and a label selector (no cache: a filter over the peers), the rebuild of a
// method's candidates after a peer changed, and the choice of a subset (client/subset.js) of
// 32 for a client calling 5 methods. No sockets: real PeerEntry objects with descriptors.
//
//   node bench/pick.js [--json]
import { PeerTable } from '../client/peer-table.js'
import { Router } from '../client/routing.js'
import { ZonePreference } from '../client/zone.js'
import { p2c } from '../client/strategies/p2c.js'
import { chooseSubset } from '../client/subset.js'
import { describe } from '../protocol/service.js'
import { seededRandom } from '../testing/random.js'
import os from 'node:os'

const METHODS = Array.from({ length: 50 }, (_, i) => `orders.m${i}`)

function setup (n) {
  let now = 0
  const table = new PeerTable(() => {}, () => now)
  const router = new Router(table)
  for (let i = 0; i < n; i++) {
    const p = table.add(`tcp://10.0.${i >> 8}.${i & 255}:5555`)
    p.service = describe({ methods: METHODS, version: i % 2 === 0 ? '2.1.0' : '1.4.0', labels: { zone: i % 3 === 0 ? 'a' : 'b', tier: 'gold' }, capacity: 8 })
    p.latency.add(0.2 + (i % 7) / 100, 0)
    table.setState(p, 'up')
  }
  router.changed()
  return { table, router, tick: () => { now += 0.001 } }
}

/** ns per call of fn, over about 300 ms, best of 3 runs. */
function time (fn) {
  let best = Infinity
  for (let run = 0; run < 3; run++) {
    let n = 0
    const t0 = process.hrtime.bigint()
    let t
    do {
      for (let i = 0; i < 1000; i++) fn(i)
      n += 1000
      t = process.hrtime.bigint()
    } while (t - t0 < 300_000_000n)
    best = Math.min(best, Number(t - t0) / n)
  }
  return best
}

const rows = []
for (const n of [10, 100, 1000]) {
  const { table, router } = setup(n)
  const random = seededRandom(1)
  const strategy = p2c({ random, now: () => 0 })
  const zones = new ZonePreference({ zone: 'a', random })
  const call = { method: 'orders.m7', id: 1 }
  const pick = time((i) => strategy.select(router.candidates(METHODS[i % 50], null, null), call))
  const zoned = time((i) => { const m = METHODS[i % 50]; return strategy.select(zones.narrow(m, router.candidates(m, null, null), i), call) })
  const selected = time((i) => strategy.select(router.candidates(METHODS[i % 50], '^2', { tier: 'gold' }), call))
  const rebuild = time((i) => { router.changed(); return router.candidates(METHODS[i % 50], null, null) })
  const members = [...table.entries.keys()]
  const subset = time((i) => chooseSubset({ members, methods: METHODS.slice(0, 5), mayServe: (ep, m) => table.get(ep).service.has.has(m), key: String(i), size: 32 }))
  rows.push({ peers: n, pickNs: pick, zonedNs: zoned, selectorNs: selected, rebuildNs: rebuild, subsetUs: subset / 1000 })
}

if (process.argv.includes('--json')) {
  process.stdout.write(JSON.stringify(rows) + '\n')
} else {
  const f = (x) => x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en')
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores (${os.cpus()[0].model}), Node ${process.version}; 50 methods a peer\n\n`)
  process.stdout.write('| peers | pick (ns) | pick with zone (ns) | pick with version and where (ns) | candidates rebuilt after a change (ns) | subset of 32 for 5 methods (us) |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n')
  for (const r of rows) process.stdout.write(`| ${r.peers} | ${f(r.pickNs)} | ${f(r.zonedNs)} | ${f(r.selectorNs)} | ${f(r.rebuildNs)} | ${f(r.subsetUs)} |\n`)
}
