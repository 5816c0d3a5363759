// SWIM membership simulated on a fake clock and an in-memory network, for N = 10, 100, 1000:
// rounds for a join and a death to reach every member, traffic per member per round, false
// deaths under 10% message loss, convergence after a partition heals. A round is one probe
// interval. Usage: node bench/cluster/gossip-sim.js [--sizes 10,100,1000] [--json]
import { parseArgs } from 'node:util'
import { measure } from '../../sim/membership-measure.js'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10,100,1000' },
    only: { type: 'string', default: 'spread,loss,partition' },
    json: { type: 'boolean' },
    seed: { type: 'string', default: '42' },
  },
})
const ONLY = new Set(values.only.split(','))
const SIZES = values.sizes.split(',').map(Number)
const SEED = Number(values.seed)
const results = []
for (const n of SIZES) {
  const t0 = Date.now()
  const r = await measure(n, { seed: SEED, only: ONLY })
  r.wallSeconds = +((Date.now() - t0) / 1000).toFixed(1)
  results.push(r)
  if (!values.json) console.error(JSON.stringify(r))
}
console.log(JSON.stringify({ date: new Date().toISOString(), seed: SEED, results }, null, values.json ? 0 : 2))
