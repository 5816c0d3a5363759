// Lifeguard's experiment (Dadgar et al., arXiv 1707.00788) on real processes: a cluster of H
// host processes of P peers each (bench/cluster/lab/host.js, CURVE, loopback), beside a CPU-bound
// job, where some hosts are slow now and then:
//
//   frozen     `--frozen` hosts are stopped (SIGSTOP) for 150-700 ms every 1-2.5 s, then go on
//              (SIGCONT): the frozen unit is a host process, so its peers freeze together;
//   throttled  one host is held to `--throttle` percent of a core by a cgroup (v2 `cpu.max`,
//              or v1 `cpu.cfs_quota_us` where v2 has no cpu controller; said in the output;
//              none when neither can be written: said too, and the rest runs);
//   healthy    every other host.
//
// It counts, separately: deaths declared of members on healthy hosts (must be 0), deaths of
// frozen members (their pauses stay under the suspicion timeout: 0), deaths of the throttled
// host's members (reported), suspicions refuted (a member suspected while alive), and, at the
// end, the time every other peer (but the throttled host's) takes to declare a SIGKILLed
// healthy host's members dead (p50, p99 over viewers and members). Run it again with `--awareness-max 0` (local health
// off) to see what local health prevents.
//
//   node bench/cluster/slow-hosts.js [--hosts 12] [--peers 10] [--frozen 2] [--throttle 3]
//        [--seconds 60] [--awareness-max 8] [--json]       (root, for the cgroup)
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import zmq from 'zeromq'
import { LabProc } from './lab/proc.js'

const HOST_JS = fileURLToPath(new URL('./lab/host.js', import.meta.url))
const HOG_JS = fileURLToPath(new URL('../lib/spin-forever.js', import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const between = (a, b) => a + Math.random() * (b - a)
const quantile = (sorted, q) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)])

/** A cgroup holding `pid` to `percent` of a core: { kind, remove() } or { kind: null, why }. */
function throttle (pid, percent) {
  const name = `zeromesh-slow-${process.pid}`
  const v2 = '/sys/fs/cgroup'
  const period = 100000
  const quota = Math.max(1000, Math.round(period * percent / 100))
  const attempts = [
    () => { // v2: a cpu controller in the root's subtree
      if (!fs.readFileSync(`${v2}/cgroup.controllers`, 'utf8').split(/\s+/).includes('cpu')) throw new Error('no cpu controller in cgroup v2')
      const dir = `${v2}/${name}`
      fs.mkdirSync(dir)
      fs.writeFileSync(`${dir}/cpu.max`, `${quota} ${period}`)
      fs.writeFileSync(`${dir}/cgroup.procs`, String(pid))
      return { kind: `cgroup v2 cpu.max ${quota} ${period}`, dir }
    },
    () => { // v1: the cpu hierarchy's CFS quota
      const dir = `${v2}/cpu/${name}`
      fs.mkdirSync(dir)
      fs.writeFileSync(`${dir}/cpu.cfs_period_us`, String(period))
      fs.writeFileSync(`${dir}/cpu.cfs_quota_us`, String(quota))
      fs.writeFileSync(`${dir}/cgroup.procs`, String(pid))
      return { kind: `cgroup v1 cpu.cfs_quota_us ${quota} of ${period} (cgroup v2 cpu.max cannot be written here)`, dir }
    },
  ]
  const why = []
  for (const a of attempts) {
    try {
      const made = a()
      return { kind: made.kind, remove: () => { try { fs.rmdirSync(made.dir) } catch {} } }
    } catch (err) { why.push(err.message) }
  }
  return { kind: null, why: why.join('; '), remove: () => {} }
}

/**
 * @param {object} o
 * @returns {Promise<object>} the counts (see the header)
 */
export async function slowHosts ({ hosts: H = 12, peers: P = 10, frozen: F = 2, throttle: percent = 3, seconds = 60, awarenessMax, log = () => {} } = {}) {
  const N = H * P
  const base = 10000 + Math.floor(Math.random() * (22000 - N))
  const cluster = zmq.curveKeyPair()
  const clientKeys = zmq.curveKeyPair()
  const seeds = [0, 1, 2].map((h) => `tcp://127.0.0.1:${base + h * P}`)
  const membership = awarenessMax === undefined ? undefined : { awarenessMax }
  const kindOf = (h) => (h >= H - F ? 'frozen' : h === H - F - 1 && percent > 0 ? 'throttled' : 'healthy')
  const hostOf = new Map()
  const hosts = Array.from({ length: H }, (_, h) => {
    const config = { address: '127.0.0.1', peers: P, basePort: base + h * P, zone: 'abc'[h % 3], seeds, security: { clusterKey: cluster.secretKey, allow: [clientKeys.publicKey] }, membership }
    for (let i = 0; i < P; i++) hostOf.set(`tcp://127.0.0.1:${base + h * P + i}`, h)
    const proc = new LabProc(spawn(process.execPath, [HOST_JS, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] }), `host ${h + 1}`)
    proc.kind = kindOf(h)
    return proc
  })
  const hog = spawn(process.execPath, [HOG_JS], { stdio: 'ignore' })
  let cgroup = { kind: null, why: 'no host throttled', remove: () => {} }
  let freezing = true
  const freezers = []
  try {
    await Promise.all(hosts.map((h) => h.ready(60000)))
    const t0 = Date.now()
    while (Date.now() - t0 < 120000) {
      const views = (await Promise.all(hosts.map((h) => h.ask('view', {}, 30000)))).flatMap((v) => v.peers)
      if (views.every((v) => v.alive.length === N)) break
      await sleep(500)
    }
    const convergedMs = Date.now() - t0
    await Promise.all(hosts.map((h) => h.ask('deaths'))) // the cold start's are not this experiment's
    const refutedBefore = await refutations(hosts)
    log(`${N} peers converged in ${convergedMs} ms; slowing hosts for ${seconds} s`)
    const throttled = hosts.find((h) => h.kind === 'throttled')
    if (throttled !== undefined) cgroup = throttle(throttled.pid, percent)
    log(cgroup.kind === null ? `no cgroup limit: ${cgroup.why}; the SIGSTOP part runs` : `host ${hosts.indexOf(throttled) + 1} held by ${cgroup.kind}`)
    for (const h of hosts.filter((x) => x.kind === 'frozen')) {
      freezers.push((async () => {
        let pauses = 0
        while (freezing && h.alive) {
          await sleep(between(1000, 2500))
          if (!freezing) break
          try { process.kill(h.pid, 'SIGSTOP') } catch { break }
          await sleep(between(150, 700))
          try { process.kill(h.pid, 'SIGCONT') } catch { break }
          pauses++
        }
        return pauses
      })())
    }
    await sleep(seconds * 1000)
    freezing = false
    const pauses = (await Promise.all(freezers)).reduce((s, n) => s + n, 0)
    cgroup.remove() // the throttled host goes on at full speed: its members may refute
    await sleep(5000) // suspicions raised at the end run out (or are refuted)
    const deaths = (await Promise.all(hosts.map((h) => h.ask('deaths', {}, 30000)))).flatMap((d) => d.deaths)
    const refuted = (await refutations(hosts)) - refutedBefore
    const of = (kind) => deaths.filter((d) => hosts[hostOf.get(d.endpoint)].kind === kind).length
    // A healthy host killed: how long until each other peer holds each of its members dead.
    const victim = hosts.findIndex((h) => h.kind === 'healthy' && !seeds.some((s) => hostOf.get(s) === hosts.indexOf(h)))
    const killedAt = Date.now()
    await hosts[victim].kill()
    const others = hosts.filter((_, i) => i !== victim)
    const victims = new Set([...hostOf].filter(([, h]) => h === victim).map(([ep]) => ep))
    // Viewers on the throttled host are left out: it was declared dead itself and is still
    // coming back when the kill happens.
    const viewers = others.filter((h) => h.kind !== 'throttled')
    const times = []
    const want = viewers.length * P * P
    while (Date.now() - killedAt < 45000 && times.length < want) {
      await sleep(250)
      for (const d of (await Promise.all(viewers.map((h) => h.ask('deaths', {}, 30000)))).flatMap((x) => x.deaths)) if (victims.has(d.endpoint)) times.push(d.at - killedAt)
    }
    times.sort((a, b) => a - b)
    return {
      members: N,
      hosts: { healthy: hosts.filter((h) => h.kind === 'healthy').length, frozen: F, throttled: throttled === undefined ? 0 : 1 },
      awarenessMax: awarenessMax ?? 'default',
      cgroup: cgroup.kind ?? `none (${cgroup.why})`,
      seconds,
      pauses,
      deathsHealthy: of('healthy'),
      deathsFrozen: of('frozen'),
      deathsThrottled: of('throttled'),
      refuted,
      killedDeadMs: { p50: quantile(times, 0.5), p99: quantile(times, 0.99), seen: `${times.length} of ${want}` },
    }
  } finally {
    freezing = false
    for (const h of hosts) { try { process.kill(h.pid, 'SIGCONT') } catch {} }
    cgroup.remove()
    hog.kill('SIGKILL')
    for (const h of hosts) if (h.alive) h.tell('stop')
    await Promise.race([Promise.all(hosts.map((h) => h.exited)), sleep(10000)])
    await Promise.all(hosts.map((h) => h.kill()))
  }
}

async function refutations (hosts) {
  const stats = await Promise.all(hosts.filter((h) => h.alive).map((h) => h.ask('stats', {}, 30000)))
  return stats.reduce((s, h) => s + h.peers.reduce((t, p) => t + p.membership.refuted, 0), 0)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values: o } = parseArgs({
    options: {
      hosts: { type: 'string', default: '12' },
      peers: { type: 'string', default: '10' },
      frozen: { type: 'string', default: '2' },
      throttle: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '60' },
      'awareness-max': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  const r = await slowHosts({
    hosts: Number(o.hosts), peers: Number(o.peers), frozen: Number(o.frozen), throttle: Number(o.throttle), seconds: Number(o.seconds),
    awarenessMax: o['awareness-max'] === undefined ? undefined : Number(o['awareness-max']),
    log: (m) => process.stderr.write(`[slow-hosts] ${m}\n`),
  })
  process.stdout.write((o.json ? JSON.stringify(r) : JSON.stringify(r, null, 2)) + '\n')
}
