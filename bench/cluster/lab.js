// The mesh across many hosts, on one machine (bench/README.md, "The lab"): H hosts as Linux
// network namespaces on a bridge (bench/cluster/lab/net.js), each running P peers in one process
// (bench/cluster/lab/host.js: why one process), hosts spread over Z zones (the peers' `zone`
// label), C client processes on client hosts of their own, one per zone (bench/cluster/lab/client.js:
// real Clients, default subset, their zone), a DNS server (dnsmasq) naming the peer hosts, and
// CURVE on every connection (as off loopback it must be). Steady load runs throughout while the
// script plays, phase by phase:
//
//   cold       every peer started at once, joining through 3 seeds; clients find peers by DNS
//   steady     load raised until each peer served --steady-min requests: the spread of load
//   roll       every host's peers stopped (drained) and started again, one host at a time
//   host-loss  one host SIGKILLed, then started again
//   zone-loss  every host of one zone SIGKILLed, then started again
//   zone-cut   one zone cut off from the others by nft drop rules, then healed
//   blackhole  one host's packets dropped (its processes alive), then restored
//   scale      two more hosts join under load (through the DNS name), then drain and leave
//   idle       no load: what membership costs each peer (bytes, CPU, memory)
//
// It prints a table per phase: times to converge, failed calls by kind, deaths it caused and
// false ones (a live, reachable peer declared dead), and the spread. Root only; everything it
// made (namespaces, rules, processes by PID) is removed at the end and on any failure.
//
//   sudo node bench/cluster/lab.js [--hosts 12] [--peers 10] [--zones 3] [--clients 24]
//        [--rate 20] [--steady-rate 200] [--steady-min 2000] [--phases cold,steady,...] [--skip-cost] [--json]
import { parseArgs } from 'node:util'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import zmq from 'zeromq'
import { clientDefaults } from '../../client/options.js'
import { LabNet, staleLabNamespaces } from './lab/net.js'
import { LabProc } from './lab/proc.js'
import { spread, classifyDeaths, deathsAroundRestarts, addOutcomes, failedCount, table } from './lab/figures.js'

const ALL_PHASES = ['cold', 'steady', 'roll', 'host-loss', 'zone-loss', 'zone-cut', 'blackhole', 'scale', 'idle']
const { values: o } = parseArgs({
  options: {
    // 120 peers and 24 clients (issue 73): membership's cost per peer no longer grows with the
    // cluster (bench/RESULTS.md, "The lab").
    hosts: { type: 'string', default: '12' },
    peers: { type: 'string', default: '10' },
    zones: { type: 'string', default: '3' },
    clients: { type: 'string', default: '24' },
    rate: { type: 'string', default: '20' }, //          calls a second per client between the steady window's
    'steady-rate': { type: 'string', default: '200' }, // ...and during it
    'steady-min': { type: 'string', default: '2000' }, // requests a peer in the steady window, at least
    'fault-seconds': { type: 'string', default: '12' }, // how long a cut or a blackhole lasts
    phases: { type: 'string', default: ALL_PHASES.join(',') },
    'attempt-timeout': { type: 'string' }, //           the clients' attemptTimeout (ms); unset: the client's default
    'skip-cost': { type: 'boolean', default: false }, // a whole run ends with membership's cost at 30, 60 and 120 (membership-cost.js): not this time
    json: { type: 'boolean', default: false },
  },
})
const H = Number(o.hosts)
const P = Number(o.peers)
const Z = Number(o.zones)
const C = Number(o.clients)
const phases = o.phases.split(',')
for (const p of phases) if (!ALL_PHASES.includes(p)) throw new Error(`--phases: ${p} is not one of ${ALL_PHASES.join(', ')}`)
const BASE_PORT = 5555
const SUBSET = clientDefaults.subset
const DNS_NAME = 'peers.zeromesh.lab'
const here = path.dirname(fileURLToPath(import.meta.url))
const HOST_JS = path.join(here, 'lab', 'host.js')
const CLIENT_JS = path.join(here, 'lab', 'client.js')
const DNSMASQ = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'].find((f) => fs.existsSync(f))
const log = (...a) => process.stderr.write(`[lab ${((Date.now() - T0) / 1000).toFixed(1)} s] ${a.join(' ')}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const T0 = Date.now()

/** Polls `check` (async, truthy when done) every `every` ms; ms it took, or null after `timeout`. */
async function waitFor (check, timeout, every = 200) {
  const start = Date.now()
  while (Date.now() - start < timeout) {
    if (await check()) return Date.now() - start
    await sleep(every)
  }
  return null
}

for (const ns of staleLabNamespaces()) spawnSync('ip', ['netns', 'del', ns]) // a killed run's leftovers
if (DNSMASQ === undefined) throw new Error('the lab needs dnsmasq: apt-get install dnsmasq-base')
const net = new LabNet()
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-lab-'))
const rows = []
let result
try {
  result = await main()
} finally {
  net.destroy()
  fs.rmSync(dir, { recursive: true, force: true })
}
if (o.json) process.stdout.write(JSON.stringify(result) + '\n')
else process.stdout.write(result.text + '\n')
// A whole run (every phase) ends with what membership costs a peer at rest at 30, 60 and 120
// members, in the same sitting (on loopback, after the namespaces are gone).
if (!o.json && !o['skip-cost'] && ALL_PHASES.every((p) => phases.includes(p))) {
  process.stdout.write('\n')
  const cost = spawnSync(process.execPath, [fileURLToPath(new URL('./membership-cost.js', import.meta.url)), '--hosts', '3,6,12', '--peers', String(P)], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 900000 })
  if (cost.status !== 0) process.exitCode = 1
}

async function main () {
  const zones = Array.from({ length: Z }, (_, z) => String.fromCharCode(97 + z))
  // Peer hosts (two more held back for the scale phase), client hosts (one per zone), DNS.
  const hosts = Array.from({ length: H + 2 }, (_, i) => ({ name: `h${i + 1}`, address: LabNet.address(0, i), zone: zones[i % Z], proc: null, endpoints: [] }))
  for (const h of hosts) net.addHost(h.name, h.address)
  const clientHosts = zones.map((z, i) => ({ name: `c${z}`, address: LabNet.address(1, i), zone: z }))
  for (const h of clientHosts) net.addHost(h.name, h.address)
  const dnsAddress = LabNet.address(2, 0)
  net.addHost('dns', dnsAddress)
  const hostOf = new Map() // endpoint -> host name
  const endpointsOf = (h) => Array.from({ length: P }, (_, i) => `tcp://${h.address}:${BASE_PORT + i}`)
  for (const h of hosts) { h.endpoints = endpointsOf(h); for (const ep of h.endpoints) hostOf.set(ep, h.name) }
  const inService = new Set(hosts.slice(0, H).map((h) => h.name)) // hosts whose peers should be up

  // DNS: every host in service, at the first peer's port (a headless Service's pods).
  const hostsFile = path.join(dir, 'hosts')
  const writeDns = () => fs.writeFileSync(hostsFile, hosts.filter((h) => inService.has(h.name)).map((h) => `${h.address} ${DNS_NAME}`).join('\n') + '\n')
  writeDns()
  const dnsmasq = new LabProc(net.spawn('dns', [DNSMASQ, '--keep-in-foreground', '--no-resolv', '--no-hosts', '--no-poll', '--conf-file=/dev/null', '--pid-file=', '--user=root',
    '--bind-interfaces', `--listen-address=${dnsAddress}`, '--port=53', '--local-ttl=0', `--addn-hosts=${hostsFile}`]), 'dnsmasq')
  const reloadDns = () => { writeDns(); process.kill(dnsmasq.pid, 'SIGHUP') }
  const dns = { servers: [`${dnsAddress}:53`], interval: 2000, timeout: 1000 }

  const cluster = zmq.curveKeyPair()
  const clientKeys = zmq.curveKeyPair()
  const seeds = hosts.slice(0, 3).map((h) => h.endpoints[0])
  const hostConfig = (h, viaDns) => ({
    address: h.address, peers: P, basePort: BASE_PORT, zone: h.zone, dns,
    seeds: viaDns ? [`dns://${DNS_NAME}:${BASE_PORT}`] : seeds,
    security: { clusterKey: cluster.secretKey, allow: [clientKeys.publicKey] },
  })
  const startHost = (h, viaDns = false) => {
    const prof = process.env.LAB_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.LAB_CPU_PROF}`] : [] // a profile of each host process
    h.proc = new LabProc(net.spawn(h.name, [process.execPath, ...prof, HOST_JS, JSON.stringify(hostConfig(h, viaDns))]), h.name)
    return h.proc
  }
  const clients = []
  const startClient = (i) => {
    const ch = clientHosts[i % Z]
    const config = { seeds: [`dns://${DNS_NAME}:${BASE_PORT}`], dns, zone: ch.zone, rate: Number(o.rate), expectPeers: Math.min(SUBSET, H * P), ...(o['attempt-timeout'] !== undefined ? { attemptTimeout: Number(o['attempt-timeout']) } : {}), security: { clusterPublicKey: cluster.publicKey, secretKey: clientKeys.secretKey } }
    const c = new LabProc(net.spawn(ch.name, [process.execPath, CLIENT_JS, JSON.stringify(config)]), `client ${i + 1} (${ch.zone})`)
    c.zone = ch.zone
    clients.push(c)
    return c
  }

  // What the lab did to the network and the processes, for telling deaths it caused from false ones.
  const faults = []
  const fault = (kind, names) => { const f = { kind, hosts: new Set(names), from: Date.now(), to: null }; faults.push(f); return f }
  const live = () => hosts.filter((h) => h.proc?.alive)
  const deaths = []
  const collectDeaths = async () => {
    for (const h of live()) {
      try { deaths.push(...(await h.proc.ask('deaths')).deaths) } catch {}
    }
  }
  const views = async () => (await Promise.all(live().map((h) => h.proc.ask('view').then((v) => v.peers, () => [])))).flat()
  const expected = () => new Set(hosts.filter((h) => inService.has(h.name)).flatMap((h) => h.endpoints))
  /** Every peer in service lists exactly the peers in service as alive. */
  let lastSaid = 0
  const converged = async () => {
    const want = expected()
    const vs = await views()
    const ok = vs.length === want.size && vs.every((v) => v.alive.length === want.size && v.alive.every((ep) => want.has(ep)))
    if (!ok && Date.now() - lastSaid > 5000) {
      lastSaid = Date.now()
      const counts = vs.map((v) => v.alive.length)
      log(`waiting for ${want.size} peers to see each other: ${vs.length} answered, alive seen ${Math.min(...counts)}-${Math.max(...counts)}`)
    }
    return ok
  }
  const clientUp = async (c) => (await c.ask('view')).up
  /** No client (of `only`, if given) holds any of `endpoints` up. */
  const noClientHolds = (endpoints, only = clients) => async () => {
    const ups = await Promise.all(only.map(clientUp))
    return ups.every((up) => up.every((ep) => !endpoints.includes(ep)))
  }
  const stats = async () => Object.fromEntries((await Promise.all(live().map((h) => h.proc.ask('stats').then((s) => [h.name, s])))))
  /** Replies the peers of the host processes running now dropped (a client gone, or not reading for 2 s), by reason. */
  const dropsNow = async () => {
    const out = {}
    for (const s of Object.values(await stats().catch(() => ({})))) for (const p of s.peers) for (const [k, n] of Object.entries(p.drops ?? {})) out[k] = (out[k] ?? 0) + n
    return out
  }
  const dropsNote = (d) => (Object.keys(d).length === 0 ? '' : `; replies dropped by peers ${JSON.stringify(d)}`)
  const setRate = (rate) => { for (const c of clients) c.tell('rate', { rate }) }

  async function phase (name, fn) {
    if (!phases.includes(name)) return
    await collectDeaths()
    for (const c of clients) c.tell('phase', { name })
    log(`phase ${name}`)
    const from = Date.now()
    const row = { phase: name, from, ...(await fn()) }
    await collectDeaths()
    row.to = Date.now()
    row.seconds = (row.to - from) / 1000
    rows.push(row)
    log(`phase ${name} done in ${row.seconds.toFixed(1)} s: ${JSON.stringify(Object.fromEntries(Object.entries(row).filter(([k]) => !['phase', 'from', 'to'].includes(k))))}`)
  }

  /** Stops host `h` gracefully (its peers drain and leave) and starts it again. */
  const restarts = [] // graceful ones: { host, stop, exited, ready }, for the diagnosis
  async function restart (h, graceful) {
    const r = { host: h.name, stop: Date.now(), exited: null, ready: null }
    if (graceful) { restarts.push(r); h.proc.tell('stop'); await Promise.race([h.proc.exited, sleep(30000)]) }
    await h.proc.kill()
    r.exited = Date.now()
    const f = graceful ? fault('gone', [h.name]) : null // its old incarnations are gone: their deaths are true, if late
    startHost(h)
    await h.proc.ready()
    r.ready = Date.now()
    if (f !== null) f.to = r.ready
    r.lagMaxMs = (await h.proc.ask('stats').catch(() => ({}))).lagMaxMs ?? null // the new process's worst loop delay, start-up included
  }

  // ---- cold start -------------------------------------------------------------------------
  const cold = {}
  {
    const start = Date.now()
    for (const h of hosts.slice(0, H)) startHost(h)
    await Promise.all(hosts.slice(0, H).map((h) => h.proc.ready()))
    cold.startedMs = Date.now() - start
    log(`${H} hosts serving after ${ms(cold.startedMs)}`)
    for (let i = 0; i < C; i++) startClient(i)
    // Times from the moment every host was started; the peers' convergence is watched while
    // the clients start (it does not wait for them).
    const members = waitFor(converged, 120000, 250).then((took) => (took === null ? null : Date.now() - start))
    await Promise.all(clients.map((c) => c.ready(120000)))
    log(`${C} clients ready after ${ms(Date.now() - start)}`)
    cold.membersMs = await members
    const want = Math.min(SUBSET, H * P)
    cold.subsetMs = (await waitFor(async () => (await Promise.all(clients.map(clientUp))).every((up) => up.length >= want), 120000, 250)) === null ? null : Date.now() - start
  }
  rows.push({ phase: 'cold', from: T0, to: Date.now(), seconds: (Date.now() - T0) / 1000, members: ms(cold.membersMs), subsets: ms(cold.subsetMs), note: `hosts up in ${ms(cold.startedMs)}${dropsNote(await dropsNow())}` })
  for (const c of clients) c.tell('phase', { name: 'cold' }) // calls so far counted under 'start'

  await phase('steady', async () => {
    setRate(Number(o['steady-rate']))
    await sleep(2000) // the rate is reached
    const before = await stats()
    const count = (s) => Object.fromEntries(Object.values(s).flatMap((h) => h.peers.map((p) => [p.endpoint, p.requests])))
    let per = {}
    const took = await waitFor(async () => {
      const now = count(await stats())
      const was = count(before)
      per = Object.fromEntries(Object.keys(now).map((ep) => [ep, now[ep] - (was[ep] ?? 0)]))
      const mean = Object.values(per).reduce((s, v) => s + v, 0) / Object.keys(per).length
      return mean >= Number(o['steady-min'])
    }, 240000, 1000)
    setRate(Number(o.rate))
    const load = spread(Object.values(per))
    const ups = await Promise.all(clients.map(clientUp))
    const conns = {}
    for (const ep of expected()) conns[ep] = 0
    for (const up of ups) for (const ep of up) conns[ep] = (conns[ep] ?? 0) + 1
    const c = spread(Object.values(conns))
    return { load, connections: c, windowS: took === null ? null : took / 1000, note: took === null ? 'the window did not reach --steady-min in 240 s' : '' }
  })

  await phase('roll', async () => {
    const per = []
    for (const h of hosts.slice(0, H)) {
      const start = Date.now()
      await restart(h, true)
      const back = await waitFor(converged, 60000, 250)
      per.push(back === null ? null : Date.now() - start)
    }
    const done = per.filter((x) => x !== null)
    const rolled = restarts.slice(-per.length)
    const startUp = rolled.map((r) => r.ready - r.exited)
    const lags = rolled.map((r) => r.lagMaxMs).filter((x) => x !== null)
    return { hostsRestarted: per.length, note: `per host until every peer sees every member: median ${ms(median(done))}, max ${ms(Math.max(...done))}${done.length < per.length ? `; ${per.length - done.length} never converged within 60 s` : ''}; a new host process serving after median ${ms(median(startUp))} (max ${ms(Math.max(...startUp))}), its loop's worst delay by then ${lags.length === 0 ? 'not known' : `median ${ms(median(lags))} (max ${ms(Math.max(...lags))})`}` }
  })

  await phase('host-loss', async () => {
    const h = hosts[H - 1]
    const f = fault('down', [h.name])
    await h.proc.kill()
    const clientsOff = await waitFor(noClientHolds(h.endpoints), 60000, 100)
    const deadEverywhere = await waitFor(async () => (await views()).every((v) => v.alive.every((ep) => !h.endpoints.includes(ep))), 60000, 100)
    startHost(h)
    await h.proc.ready()
    f.to = Date.now()
    const back = await waitFor(converged, 60000, 250)
    return { clientsOff: ms(clientsOff), dead: ms(deadEverywhere), members: ms(back) }
  })

  await phase('zone-loss', async () => {
    const z = zones[Z - 1]
    const lost = hosts.slice(0, H).filter((h) => h.zone === z)
    const eps = lost.flatMap((h) => h.endpoints)
    const f = fault('down', lost.map((h) => h.name))
    await Promise.all(lost.map((h) => h.proc.kill()))
    const zoneClientsOff = await waitFor(noClientHolds(eps, clients.filter((c) => c.zone === z)), 60000, 100)
    const clientsOff = await waitFor(noClientHolds(eps), 60000, 100)
    for (const h of lost) startHost(h)
    await Promise.all(lost.map((h) => h.proc.ready()))
    f.to = Date.now()
    const back = await waitFor(converged, 90000, 250)
    return { zoneClientsOff: ms(zoneClientsOff), clientsOff: ms(clientsOff), members: ms(back) }
  })

  await phase('zone-cut', async () => {
    const z = zones[Math.min(1, Z - 1)]
    const side = [...hosts.filter((h) => h.zone === z), ...clientHosts.filter((h) => h.zone === z)]
    const others = [...hosts.filter((h) => h.zone !== z), ...clientHosts.filter((h) => h.zone !== z), { name: 'dns', address: dnsAddress }]
    const f = fault('cut', side.map((h) => h.name))
    for (const h of side) net.block(h.name, others.map((x) => x.address))
    for (const h of others) net.block(h.name, side.map((x) => x.address))
    await sleep(Number(o['fault-seconds']) * 1000)
    for (const h of [...side, ...others]) net.heal(h.name)
    f.to = Date.now()
    const back = await waitFor(converged, 90000, 250)
    return { members: ms(back), note: `cut ${o['fault-seconds']} s` }
  })

  await phase('blackhole', async () => {
    const h = hosts[1]
    const f = fault('blackhole', [h.name])
    net.blackhole(h.name)
    const clientsOff = await waitFor(noClientHolds(h.endpoints), 60000, 100)
    await sleep(Math.max(0, Number(o['fault-seconds']) * 1000 - (clientsOff ?? 0)))
    net.heal(h.name)
    f.to = Date.now()
    const back = await waitFor(converged, 90000, 250)
    return { clientsOff: ms(clientsOff), members: ms(back), note: `blackholed ${o['fault-seconds']} s` }
  })

  await phase('scale', async () => {
    const added = hosts.slice(H, H + 2)
    for (const h of added) inService.add(h.name)
    reloadDns()
    const start = Date.now()
    for (const h of added) startHost(h, true) // joining through the DNS name
    await Promise.all(added.map((h) => h.proc.ready()))
    const members = await waitFor(converged, 60000, 250)
    const newEps = new Set(added.flatMap((h) => h.endpoints))
    let last = await stats()
    const share = await waitFor(async () => {
      const now = await stats()
      const delta = []
      for (const [name, s] of Object.entries(now)) for (const p of s.peers) delta.push([p.endpoint, p.requests - (last[name]?.peers.find((x) => x.endpoint === p.endpoint)?.requests ?? 0)])
      last = now
      // Their share: the new peers together serve at least 3/4 of the mean a peer (one by one,
      // a peer in few of a handful of clients' subsets would never get there: subsets are random).
      const mean = delta.reduce((s, [, v]) => s + v, 0) / delta.length
      const fresh = delta.filter(([ep]) => newEps.has(ep))
      return mean > 0 && fresh.reduce((s, [, v]) => s + v, 0) / fresh.length >= 0.75 * mean
    }, 60000, 1000)
    const shareMs = share === null ? null : Date.now() - start
    for (const h of added) inService.delete(h.name)
    reloadDns()
    for (const h of added) h.proc.tell('stop')
    await Promise.all(added.map((h) => Promise.race([h.proc.exited.then(() => { fault('gone', [h.name]) }), sleep(30000)])))
    const gone = await waitFor(converged, 60000, 250)
    return { members: ms(members), share: ms(shareMs), scaleIn: ms(gone), note: '2 hosts out and back in' }
  })

  await phase('idle', async () => {
    setRate(0)
    await sleep(3000)
    const hs = live()
    const b0 = Object.fromEntries(hs.map((h) => [h.name, net.bytes(h.name)]))
    const s0 = await stats()
    const WINDOW = 10000
    await sleep(WINDOW)
    const s1 = await stats()
    const perPeer = hs.map((h) => {
      const b = net.bytes(h.name)
      return {
        bytes: (b.tx - b0[h.name].tx) / (WINDOW / 1000) / P,
        cpu: ((s1[h.name].cpu.user + s1[h.name].cpu.system) - (s0[h.name].cpu.user + s0[h.name].cpu.system)) / 1000 / (WINDOW / 1000) / P,
        rss: s1[h.name].rss / P,
        heap: s1[h.name].heapUsed / P,
      }
    })
    const m = (k) => median(perPeer.map((x) => x[k]))
    setRate(Number(o.rate))
    return { gossipBytesPerS: Math.round(m('bytes')), cpuMsPerS: m('cpu').toFixed(2), rssMB: (m('rss') / 1048576).toFixed(1), heapMB: (m('heap') / 1048576).toFixed(1), note: `per idle peer, ${H * P} members` }
  })

  // ---- outcomes, deaths, the table ------------------------------------------------------
  await collectDeaths()
  const refusals = {}
  for (const s of Object.values(await stats().catch(() => ({})))) {
    for (const p of s.peers) {
      for (const [k, n] of Object.entries(p.refused ?? {})) refusals[k] = (refusals[k] ?? 0) + n
      refusals.memberHandshakeFailures = (refusals.memberHandshakeFailures ?? 0) + (p.handshakeFailures ?? 0)
    }
  }
  const endDrops = await dropsNow()
  const reports = await Promise.all(clients.map((c) => c.ask('stop', {}, 30000).catch((err) => ({ error: err.message }))))
  const outcomes = {}
  const warnings = {}
  for (const r of reports) for (const [k, n] of Object.entries(r.warnings ?? {})) warnings[k] = (warnings[k] ?? 0) + n
  for (const r of reports) for (const [name, b] of Object.entries(r.phases ?? {})) addOutcomes((outcomes[name] ??= {}), b)
  const samples = {} // the first failures by phase and kind, from the first clients that had some
  for (const r of reports) {
    for (const [name, b] of Object.entries(r.phases ?? {})) {
      for (const x of b.samples ?? []) if ((samples[name] ??= []).filter((y) => y.kind === x.kind).length < 3) samples[name].push(x)
    }
  }
  const { caused, falseDeaths, unheardLeaves } = classifyDeaths(deaths, faults, (ep) => hostOf.get(ep))
  const inPhase = (list, row) => list.filter((d) => d.at >= row.from && d.at <= row.to + 1000).length
  for (const row of rows) {
    const out = outcomes[row.phase] ?? {}
    if (row.phase === 'cold') addOutcomes(out, outcomes.start ?? {})
    row.idempotent = `${out.idempotent?.ok ?? 0} ok, ${failedCount(out.idempotent)} failed`
    row.nonIdempotent = `${out.nonIdempotent?.ok ?? 0} ok, ${failedCount(out.nonIdempotent)} failed (${out.nonIdempotent?.inDoubt ?? 0} in doubt)`
    row.publish = `${out.publish?.ok ?? 0} ok, ${failedCount(out.publish)} failed`
    row.failed = { idempotent: out.idempotent?.failed ?? {}, nonIdempotent: out.nonIdempotent?.failed ?? {}, publish: out.publish?.failed ?? {} }
    row.deaths = inPhase(caused, row)
    row.falseDeaths = inPhase(falseDeaths, row)
    row.unheardLeaves = inPhase(unheardLeaves, row)
  }
  const text = [
    `lab: ${H} hosts x ${P} peers = ${H * P} peers, ${Z} zones, ${C} clients (${Z} client hosts), CURVE; ${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`,
    '',
    table(rows, [
      ['phase', (r) => r.phase],
      ['s', (r) => r.seconds.toFixed(0)],
      ['members converged', (r) => r.members ?? ''],
      ['clients off the lost peers', (r) => [r.zoneClientsOff && `zone's ${r.zoneClientsOff}`, r.clientsOff && `all ${r.clientsOff}`].filter(Boolean).join(', ') || (r.subsets ? `subsets up ${r.subsets}` : '')],
      ['idempotent', (r) => r.idempotent],
      ['non-idempotent', (r) => r.nonIdempotent],
      ['publish', (r) => r.publish],
      ['deaths (false)', (r) => `${r.deaths} (${r.falseDeaths})`],
      ['notes', (r) => [r.note, r.unheardLeaves > 0 && `${r.unheardLeaves} of the deaths of members gone after a graceful stop (their leave not heard)`, r.share && `new peers at their share in ${r.share}, scale-in converged ${r.scaleIn}`, r.load && `load max/mean ${r.load.maxOverMean.toFixed(2)}x, p99/mean ${r.load.p99OverMean.toFixed(2)}x over ${Math.round(r.load.mean)} requests a peer (${r.windowS} s); connections max/mean ${r.connections.maxOverMean.toFixed(2)}x`, r.gossipBytesPerS !== undefined && `gossip ${r.gossipBytesPerS} B/s, CPU ${r.cpuMsPerS} ms/s, RSS ${r.rssMB} MB (heap ${r.heapMB} MB)`].filter(Boolean).join('; ')],
    ]),
  ].join('\n')
  const failures = rows.filter((r) => Object.values(r.failed).some((f) => Object.keys(f).length > 0)).map((r) => `${r.phase}: ${JSON.stringify(r.failed)}`)
  for (const h of live()) h.proc.tell('stop')
  await Promise.all(live().map((h) => Promise.race([h.proc.exited, sleep(15000)])))
  const diagnosis = `\n\nfailed: ${failures.join('; ')}\nfalse deaths: ${falseDeaths.length} (against the graceful restarts: ${JSON.stringify(deathsAroundRestarts(falseDeaths, restarts, (ep) => hostOf.get(ep)))}), the first: ${JSON.stringify(falseDeaths.slice(0, 3))}\nfailures seen by clients (ms since the client began; peers up when the call began and when it failed): ${JSON.stringify(samples)}\nclient warnings: ${JSON.stringify(warnings)}\npeers' refusals: ${JSON.stringify(refusals)}\nreplies dropped by the peers running at the end: ${JSON.stringify(endDrops)}`
  return { text: failures.length || falseDeaths.length ? text + diagnosis : text, rows, falseDeaths, size: { hosts: H, peers: P, zones: Z, clients: C } }
}

function ms (x) {
  return x === null || x === undefined || Number.isNaN(x) ? (x === null ? 'never' : undefined) : x >= 10000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]
}
