// Measures of SWIM membership in simulation (SimCluster on the fake clock), shared by
// bench/cluster/gossip-sim.js and the membership tests: rounds for a join and a death to reach every
// member, traffic per member per round, false deaths under message loss, convergence after a
// partition heals. A round is one probe interval.
import { SimCluster } from './membership-cluster.js'
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
    /** Records that every one of `endpoints` holds every other alive (no events say so). */
    converged (endpoints) {
      for (const subject of endpoints) views.set(subject, new Map(endpoints.filter((o) => o !== subject).map((o) => [o, 'alive'])))
    },
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

/** A converged cluster of n members (each knows every other as alive), with a tracker. */
async function build (n, opts = {}, seed = 42) {
  const sim = new SimCluster({ seed, ...opts })
  const t = tracker(sim)
  const nodes = sim.addConverged(Array.from({ length: n }, (_, i) => ep(i)))
  nodes.forEach((m, i) => t.watch(ep(i), m))
  t.converged(nodes.map((m) => m.endpoint)) // every member starts holding every other alive
  return { sim, t, round: sim.config.probeInterval }
}

async function roundsUntil (sim, round, cond, maxRounds = 200) {
  const ms = await sim.until(cond, { max: maxRounds * round, step: round / 5 })
  return ms < 0 ? null : +(ms / round).toFixed(1)
}

/**
 * Runs the measures in `only` ('spread', 'loss', 'partition') on a converged cluster of n.
 * @param {number} n
 * @param {{ seed?: number, only?: Set<string>, lossRounds?: number, trafficRounds?: number }} [o]
 */
export async function measure (n, { seed = 42, only = new Set(['spread', 'loss', 'partition']), lossRounds = 100, trafficRounds = 40 } = {}) {
  const out = { n }
  // Join: one new member, seeded with a random existing one.
  if (only.has('spread')) {
    const { sim, t, round } = await build(n, {}, seed)
    // Steady-state traffic over 40 rounds (push-pull included at its scaled interval).
    for (const tr of sim.traffic.values()) { tr.sent = 0; tr.bytes = 0 }
    sim.bytesByType = {}
    const window = trafficRounds
    await sim.run(window * round)
    let sent = 0; let bytes = 0
    for (const tr of sim.traffic.values()) { sent += tr.sent; bytes += tr.bytes }
    out.msgsPerMemberRound = +(sent / n / window).toFixed(2)
    out.bytesPerMemberRound = Math.round(bytes / n / window)
    out.syncBytesPerMemberRound = Math.round((sim.bytesByType.sync ?? 0) / n / window)

    const newcomer = ep(n)
    t.watch(newcomer, sim.add(newcomer, [ep(Math.floor(sim.random() * n))]))
    out.joinRounds = await roundsUntil(sim, round, () => t.count(newcomer, ['alive']) >= n)

    const victim = ep(Math.floor(sim.random() * n))
    sim.kill(victim)
    const others = n // n + 1 members, one killed
    // All three measured from the kill.
    const since = (a, b) => (a === null || b === null ? null : +(a + b).toFixed(1))
    out.firstDetectionRounds = await roundsUntil(sim, round, () => t.count(victim, ['suspect', 'dead']) >= 1)
    out.deathSuspectRounds = since(out.firstDetectionRounds, await roundsUntil(sim, round, () => t.count(victim, ['suspect', 'dead']) >= others))
    out.deathDeadRounds = since(out.deathSuspectRounds, await roundsUntil(sim, round, () => t.count(victim, ['dead']) >= others))
    sim.stop()
  }
  // 10% message loss: false suspicions and deaths over lossRounds rounds (every member is alive).
  if (only.has('loss')) {
    const { sim, round } = await build(n, { loss: 0.1 }, seed)
    const suspected = new Set(); const dead = new Set(); let deadViews = 0
    for (const m of sim.nodes.values()) {
      m.on('member', (x) => {
        if (x.state === 'suspect') suspected.add(x.endpoint)
        if (x.state === 'dead') { dead.add(x.endpoint); deadViews++ }
      })
    }
    await sim.run(lossRounds * round)
    out.lossSuspectedMembers = suspected.size // members some peer suspected at least once
    out.lossFalseDeadMembers = dead.size //     members some peer declared dead (all were alive)
    out.lossFalseDeadViews = deadViews //      (peer, member) pairs that went dead
    sim.stop()
  }
  // Partition into halves until each side declares the other dead, then heal.
  if (only.has('partition')) {
    const { sim, t, round } = await build(n, {}, seed)
    const all = [...sim.nodes.keys()]
    const a = all.slice(0, n / 2); const b = all.slice(n / 2)
    sim.net.partition(a, b)
    await roundsUntil(sim, round, () => t.count(a[0], ['dead']) >= b.length && t.count(b[0], ['dead']) >= a.length, 400)
    sim.net.heal()
    out.partitionHealRounds = await roundsUntil(sim, round, () => all.every((e) => t.count(e, ['alive']) >= n - 1), 1600)
    sim.stop()
  }
  return out
}

