// Measures of subsetting in the whole-system simulation, shared by test/sim/subsets.test.js
// and bench/cluster/subsets.js: connections per client, load per peer against the binomial
// expectation of random subsets, and the connections a peer's death moves.
import { insideOf } from '../client/client.js'

/** The (client, peer) connections now: "c|endpoint" for every peer in a client's table. */
export function connections (sim) {
  const out = new Set()
  sim.clients.forEach((c, i) => { for (const ep of insideOf(c).mesh.table.entries.keys()) out.add(`${i}|${ep}`) })
  return out
}

/** How many clients each peer has connections from: Map(endpoint -> clients). */
export function clientsPerPeer (sim) {
  const out = new Map()
  for (const key of connections(sim)) { const ep = key.split('|')[1]; out.set(ep, (out.get(ep) ?? 0) + 1) }
  return out
}

/** The nearest-rank `q` quantile of `values`. */
export function quantile (values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]
}

/** Answers per peer over the next `ms`, all clients together. */
export async function loadPerPeer (sim, ms) {
  const before = sim.clients.map((_, c) => sim.totals(c))
  await sim.run(ms)
  const out = new Map([...sim.peers.keys()].map((ep) => [ep, 0]))
  sim.clients.forEach((_, c) => {
    for (const [ep, n] of sim.totals(c)) if (out.has(ep)) out.set(ep, out.get(ep) + n - (before[c].get(ep) ?? 0))
  })
  return out
}

/**
 * What random subsets of `k` of `n` peers by `m` clients predict for the number of clients per
 * peer: binomial(m, k/n), its mean, standard deviation and, by a normal approximation, its
 * `q` quantile over the peers, as a ratio to the mean.
 */
export function binomialSpread (m, n, k, q = 0.99) {
  const p = k / n
  const mean = m * p
  const sd = Math.sqrt(m * p * (1 - p))
  const z = q === 0.99 ? 2.326 : 1.645
  return { mean, sd, ratio: (mean + z * sd) / mean }
}
