// SWIM membership simulated on a fake clock and an in-memory network, for N = 10, 100, 1000:
// rounds for a join and a death to reach every member, traffic per member per round, false
// deaths under 10% message loss, convergence after a partition heals. A round is one probe
// interval. Usage: node bench/gossip-sim.js [--sizes 10,100,1000] [--json]
import { parseArgs } from 'node:util'
import { SimCluster } from '../peer/membership/sim-cluster.js'
import { encodeGossip } from '../protocol/codec.js'

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '10,100,1000' }, json: { type: 'boolean' }, seed: { type: 'string', default: '42' } } })
const SIZES = values.sizes.split(',').map(Number)
const SEED = Number(values.seed)
const sizeOf = (msg) => encodeGossip(1, msg).length
const ep = (i) => `tcp://10.${(i >> 8) & 255}.${i & 255}.1:5555`

/** Counts, per endpoint, how many other members currently hold it in each state. */
function tracker (sim) {
  const views = new Map() // subject -> Map(observer -> state)
  const watch = (observer, m) => m.on('member', (x) => {
    if (x.endpoint === observer) return
    let v = views.get(x.endpoint)
    if (v === undefined) views.set(x.endpoint, v = new Map())
    v.set(observer, x.state)
  })
  return {
    watch,
    /** How many running members (other than `subject`) hold it in one of `states`. */
    count (subject, states) {
      const v = views.get(subject)
      if (v === undefined) return 0
      let n = 0
      for (const [observer, s] of v) if (sim.nodes.has(observer) && states.includes(s)) n++
      return n
    },
  }
}

async function build (n, opts = {}) {
  const sim = new SimCluster({ seed: SEED, sizeOf, ...opts })
  const t = tracker(sim)
  for (let i = 0; i < n; i++) {
    const seeds = i === 0 ? [] : [ep(Math.floor(sim.random() * i))]
    const m = sim.add(ep(i), seeds)
    t.watch(ep(i), m)
  }
  const round = sim.config.probeInterval
  const joined = await sim.until(() => { for (let i = 0; i < n; i++) if (t.count(ep(i), ['alive']) < n - 1) return false; return true }, { max: 600 * round, step: round })
  return { sim, t, round, startup: joined < 0 ? -1 : joined / round }
}

async function roundsUntil (sim, round, cond, maxRounds = 200) {
  const ms = await sim.until(cond, { max: maxRounds * round, step: round / 5 })
  return ms < 0 ? null : +(ms / round).toFixed(1)
}

async function scenario (n) {
  const out = { n }
  // Join: one new member, seeded with a random existing one.
  {
    const { sim, t, round, startup } = await build(n)
    out.startupRounds = startup
    await sim.run(10 * round) // let the start-up gossip settle
    for (const tr of sim.net.traffic.values()) { tr.sent = 0; tr.bytes = 0 }
    const window = 20
    await sim.run(window * round)
    let sent = 0; let bytes = 0
    for (const tr of sim.net.traffic.values()) { sent += tr.sent; bytes += tr.bytes }
    out.msgsPerMemberRound = +(sent / n / window).toFixed(2)
    out.bytesPerMemberRound = Math.round(bytes / n / window)

    const newcomer = ep(n)
    t.watch(newcomer, sim.add(newcomer, [ep(Math.floor(sim.random() * n))]))
    out.joinRounds = await roundsUntil(sim, round, () => t.count(newcomer, ['alive']) >= n)

    const victim = ep(Math.floor(sim.random() * n))
    sim.kill(victim)
    const others = n // n + 1 members, one killed
    out.deathSuspectRounds = await roundsUntil(sim, round, () => t.count(victim, ['suspect', 'dead']) >= others)
    out.deathDeadRounds = await roundsUntil(sim, round, () => t.count(victim, ['dead']) >= others)
    sim.stop()
  }
  // 10% message loss: false deaths over 100 rounds.
  {
    const { sim, round } = await build(n, { loss: 0.1 })
    let falseDeaths = 0
    for (const m of sim.nodes.values()) m.on('member', (x) => { if (x.state === 'dead' && sim.nodes.has(x.endpoint)) falseDeaths++ })
    await sim.run(100 * round)
    out.falseDeathsAt10pctLoss = falseDeaths
    sim.stop()
  }
  // Partition into halves until each side declares the other dead, then heal.
  {
    const { sim, t, round } = await build(n)
    const all = [...sim.nodes.keys()]
    const a = all.slice(0, n / 2); const b = all.slice(n / 2)
    sim.net.partition(a, b)
    await roundsUntil(sim, round, () => t.count(a[0], ['dead']) >= b.length && t.count(b[0], ['dead']) >= a.length, 400)
    sim.net.heal()
    out.partitionHealRounds = await roundsUntil(sim, round, () => all.every((e) => t.count(e, ['alive']) >= n - 1), 400)
    sim.stop()
  }
  return out
}

const results = []
for (const n of SIZES) {
  const t0 = Date.now()
  const r = await scenario(n)
  r.wallSeconds = +((Date.now() - t0) / 1000).toFixed(1)
  results.push(r)
  if (!values.json) console.error(JSON.stringify(r))
}
console.log(JSON.stringify({ date: new Date().toISOString(), seed: SEED, results }, null, values.json ? 0 : 2))
