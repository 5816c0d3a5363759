// The failover demo (`zeromesh demo`, `npm start`): peers on loopback serving two services
// (the demo handlers on N peers, billing on two more), a client seeded with only the first,
// steady mixed load that the client routes by method, and a scripted timeline: a peer is SIGKILLed, a new one
// joins, one is drained with SIGTERM, one is frozen with SIGSTOP and thawed. On a terminal a
// live view; otherwise plain timestamped lines. Ends with a summary; exits 0 only if no
// request failed and no peer exited on its own. Every process it starts is killed on the way
// out, Ctrl-C included.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import process from 'node:process'
import { Client } from '../client/index.js'
import { writeKeyPair } from '../transport/keys.js'

const BIN = fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url))
const BILLING = fileURLToPath(new URL('./billing.js', import.meta.url))
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] // each stops every process the demo started
const BAR = 24

/**
 * Keys for a secured demo in a new temporary directory: the cluster's, and the client's on
 * the allow-list. `remove()` deletes the directory.
 */
function demoKeys () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-demo-'))
  const cluster = writeKeyPair(path.join(dir, 'cluster'))
  const client = writeKeyPair(path.join(dir, 'client'))
  return {
    peerArgs: ['--cluster-key', cluster.secretFile, '--allow', client.publicFile],
    clientSecurity: { clusterPublicKey: cluster.publicKey, secretKey: client.secretKey },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  }
}

export async function runDemo ({ duration = 40, peers: peerCount = 3, chaos = true, secure = false, out = process.stdout, tty = out.isTTY === true } = {}) {
  const t0 = Date.now()
  const children = new Map() // pid -> { child, endpoint, name }
  const events = []
  const stamp = () => `+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s`
  const log = (msg) => {
    const line = `${stamp()} ${msg}`
    events.push(line)
    if (!tty) out.write(line + '\n')
  }
  const short = (ep) => ep.slice(ep.lastIndexOf(':'))

  const keys = secure ? demoKeys() : null
  // A peer that exits without the timeline stopping it crashed: said at once, and the run fails.
  const stopping = new Set() // pids the timeline kills or drains, and all of them at the end
  const crashed = []
  const cleanup = () => {
    for (const pid of children.keys()) stopping.add(pid)
    for (const { child } of children.values()) { try { process.kill(child.pid, 'SIGCONT') } catch {} try { process.kill(child.pid, 'SIGKILL') } catch {} }
    keys?.remove()
  }
  // Ctrl-C, a kill, a closed terminal: every process started is stopped, then the demo exits
  // as that signal would have ended it (128 + its number). Without a handler a SIGTERM or
  // SIGHUP ends Node at once, 'exit' handlers unrun, and the peers would live on.
  const onSignal = (signal) => { cleanup(); if (tty) out.write('\x1b[?25h\x1b[?1049l'); out.write('\ninterrupted: every process started was stopped\n'); process.exit(128 + os.constants.signals[signal]) }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  process.on('exit', cleanup)

  async function startPeer (seeds, extra = ['--demo-handlers']) {
    const args = [BIN, 'peer', '--threads', '1', ...extra, ...(keys?.peerArgs ?? [])]
    if (seeds.length > 0) args.push('--seeds', seeds.join(','))
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] })
    const endpoint = await new Promise((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(d.toString().trim()))
      child.once('exit', (code) => reject(new Error(`a peer exited (${code}) before starting`)))
    })
    const p = { child, endpoint, startedAt: Date.now() }
    children.set(child.pid, p)
    child.once('exit', (code, signal) => {
      children.delete(child.pid)
      if (stopping.has(child.pid)) return
      crashed.push(`${short(endpoint)} (${signal ?? `code ${code}`})`)
      log(`peer ${short(endpoint)} exited on its own (${signal ?? `code ${code}`})`)
    })
    return p
  }

  // ---- the cluster and the client ---------------------------------------------------
  const peers = []
  for (let i = 0; i < peerCount; i++) {
    peers.push(await startPeer(i === 0 ? [] : [peers[i - 1].endpoint]))
    log(`peer ${short(peers[i].endpoint)} started (pid ${peers[i].child.pid})${i === 0 ? '' : `, seeded with ${short(peers[i - 1].endpoint)}`}`)
  }
  // A second service, billing (invoice), on two peers of its own: the client sends invoice
  // only there, and whoami and spin only to the peers above.
  const billing = []
  for (let i = 0; i < 2; i++) {
    billing.push(await startPeer([peers[0].endpoint], ['--handlers', BILLING, '--labels', 'service=billing']))
    log(`peer ${short(billing[i].endpoint)} started (pid ${billing[i].child.pid}), serving billing (invoice, refund), seeded with ${short(peers[0].endpoint)}`)
  }
  const clientStartedAt = Date.now()
  const client = new Client({ seeds: [peers[0].endpoint], timeout: 2000, security: keys?.clientSecurity })
  log(`client started, seeded with ${short(peers[0].endpoint)} only${secure ? '; CURVE on every connection, the client\'s key on the peers\' allow-list' : ''}`)
  const learnedAt = new Map()
  const lastState = new Map() // endpoint -> the state the client last said
  client.on('peer', (p) => {
    const before = lastState.get(p.endpoint)
    lastState.set(p.endpoint, p.state)
    if (p.state === 'up' && !learnedAt.has(p.endpoint)) {
      learnedAt.set(p.endpoint, Date.now())
      const started = [...children.values(), ...peers].find((x) => x.endpoint === p.endpoint)?.startedAt
      // A peer that started before the client can only be learned after the client started.
      const since = started === undefined ? null : started < clientStartedAt ? ['the client started', clientStartedAt] : ['it started', started]
      log(`client learned ${short(p.endpoint)}${since === null ? '' : ` ${Date.now() - since[1]} ms after ${since[0]}`}`)
    } else if (learnedAt.has(p.endpoint)) {
      log(`client sees ${short(p.endpoint)} ${stateText(p, before)}`)
    }
  })

  // ---- load ---------------------------------------------------------------------------
  const perPeer = new Map() // endpoint -> { count, window: [latency...] }
  const routes = new Map() //  method -> Map(endpoint -> answers)
  let served = 0; let failed = 0; let longest = 0
  const failures = []
  let stop = false
  const loop = async (i) => {
    while (!stop) {
      const method = i % 8 === 0 ? 'spin' : i % 8 === 1 ? 'invoice' : 'whoami'
      const t = Date.now()
      try {
        const r = method === 'spin' ? await client.request('spin', { n: 200000 }) : method === 'invoice' ? await client.request('invoice', { order: served }) : await client.request('whoami')
        let byPeer = routes.get(method)
        if (byPeer === undefined) routes.set(method, byPeer = new Map())
        byPeer.set(r.endpoint, (byPeer.get(r.endpoint) ?? 0) + 1)
        const ms = Date.now() - t
        longest = Math.max(longest, ms)
        served++
        let s = perPeer.get(r.endpoint)
        if (s === undefined) perPeer.set(r.endpoint, s = { count: 0, window: [] })
        s.count++
        s.window.push(ms)
      } catch (err) {
        failed++
        if (failures.length < 5) failures.push(`${err.code}: ${err.message}`)
      }
    }
  }
  const loops = Array.from({ length: 16 }, (_, i) => loop(i))
  // Every 250 ms, what each peer served so far: the summary reads when the thawed peer got
  // its share back from these.
  const samples = [] // [time, Map(endpoint -> count)]
  const sampler = setInterval(() => samples.push([Date.now(), new Map([...perPeer].map(([ep, x]) => [ep, x.count]))]), 250)

  // ---- the view -----------------------------------------------------------------------
  let lastCounts = new Map()
  const view = () => {
    const rows = []
    for (const p of client.peers()) {
      const s = perPeer.get(p.endpoint) ?? { count: 0, window: [] }
      const rate = (s.count - (lastCounts.get(p.endpoint) ?? 0)) * 4 // refreshed every 250 ms
      const sorted = [...s.window].sort((a, b) => a - b)
      const p99 = sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]
      s.window = []
      rows.push({ ep: short(p.endpoint), state: p.state, rate, p99, serves: p.service === null ? '' : p.service === 'any' ? 'any' : p.service.methods.includes('invoice') ? 'billing' : 'demo' })
    }
    lastCounts = new Map([...perPeer].map(([ep, s]) => [ep, s.count]))
    const max = Math.max(1, ...rows.map((r) => r.rate))
    const lines = [`zeromesh failover demo  ${stamp()} / ${duration}s   served ${served}   ${failed} failed   retries ${client.stats().retries}`, '']
    lines.push('peer      serves   state      req/s                               p99 ms')
    for (const r of rows) {
      const bar = '#'.repeat(Math.round((r.rate / max) * BAR)).padEnd(BAR)
      lines.push(`${r.ep.padEnd(9)} ${r.serves.padEnd(8)} ${r.state.padEnd(10)} ${bar} ${String(r.rate).padStart(6)}   ${String(r.p99).padStart(5)}`)
    }
    const room = Math.max(5, (out.rows ?? 30) - lines.length - 2)
    lines.push('', ...events.slice(-room))
    // Redrawn in place on the terminal's alternate screen: no scrollback, no flicker.
    out.write('\x1b[H' + lines.map((l) => l + '\x1b[K').join('\n') + '\n\x1b[J')
  }
  // The live view has the alternate screen and no cursor; the normal screen and the cursor
  // come back at the end (and on Ctrl-C), where the whole timeline and the summary are printed.
  const screen = (on) => { if (tty) out.write(on ? '\x1b[?1049h\x1b[?25l' : '\x1b[?25h\x1b[?1049l') }
  screen(true)
  const viewTimer = tty ? setInterval(view, 250) : setInterval(() => { log(`served ${served}, ${failed} failed, peers ${client.peers().map((p) => `${short(p.endpoint)} ${p.state}`).join(', ')}`) }, 5000)

  // ---- the timeline ---------------------------------------------------------------------
  const at = (share) => new Promise((resolve) => setTimeout(resolve, Math.max(0, t0 + share * duration * 1000 - Date.now())))
  let killedAt = 0
  let joined = null
  let thaw = null // { endpoint, at }
  if (chaos && peers.length >= 3) {
    await at(0.2)
    const victim = peers[1]
    stopping.add(victim.child.pid)
    process.kill(victim.child.pid, 'SIGKILL'); killedAt = Date.now()
    log(`peer ${short(victim.endpoint)} killed (SIGKILL)`)
    await at(0.35)
    joined = await startPeer([peers[0].endpoint])
    log(`peer ${short(joined.endpoint)} started (pid ${joined.child.pid}), seeded with ${short(peers[0].endpoint)}`)
    await at(0.5)
    const drained = peers[2]
    stopping.add(drained.child.pid)
    process.kill(drained.child.pid, 'SIGTERM')
    log(`peer ${short(drained.endpoint)} drained (SIGTERM)`)
    drained.child.once('exit', (code) => log(`peer ${short(drained.endpoint)} exited with code ${code}`))
    await at(0.65)
    const frozen = peers[0]
    process.kill(frozen.child.pid, 'SIGSTOP')
    log(`peer ${short(frozen.endpoint)} frozen (SIGSTOP)`)
    await at(0.75)
    process.kill(frozen.child.pid, 'SIGCONT')
    thaw = { endpoint: frozen.endpoint, at: Date.now() }
    log(`peer ${short(frozen.endpoint)} thawed (SIGCONT)`)
  }
  await at(1)
  stop = true
  await Promise.all(loops)
  clearInterval(viewTimer)
  clearInterval(sampler)
  screen(false)
  if (tty) out.write(['timeline', ...events].join('\n') + '\n')
  client.removeAllListeners('peer') // the run is over: what closing does is not an event of it
  await client.close()
  cleanup()
  for (const signal of STOP_SIGNALS) process.off(signal, onSignal)

  const ok = failed === 0 && crashed.length === 0
  const learn = joined !== null && learnedAt.has(joined.endpoint) ? `${learnedAt.get(joined.endpoint) - joined.startedAt} ms` : 'n/a'
  const s = client.stats()
  const summary = [
    '',
    `summary: ${ok ? 'PASS' : 'FAIL'} (${failed === 0 ? 'no request failed' : `${failed} request${failed === 1 ? '' : 's'} failed`}${crashed.length === 0 ? '' : `; peer ${crashed.join(', ')} exited on its own`})`,
    `  requests served   ${served}`,
    `  ${failed} failed`,
    `  retries           ${s.retries} (attempt timeouts ${s.attemptTimeouts})`,
    `  failover gap      ${longest} ms (the longest any request waited, retries included${killedAt ? '' : '; no chaos'})`,
    `  new peer learned  ${learn} after it started`,
  ]
  // Routing by method: which peers answered each method. invoice must come only from the
  // billing peers, and whoami and spin never from them.
  const billingEps = new Set(billing.map((b) => b.endpoint))
  if (thaw !== null) summary.push(`  thawed peer       ${backAfterThaw(samples, thaw, client.peers().filter((p) => p.state === 'up' && !billingEps.has(p.endpoint)).length, billingEps)}`)
  let misrouted = 0
  for (const [method, byPeer] of [...routes].sort()) {
    for (const ep of byPeer.keys()) if ((method === 'invoice') !== billingEps.has(ep)) misrouted += byPeer.get(ep)
    summary.push(`  ${method.padEnd(17)} ${[...byPeer].map(([ep, n]) => `${short(ep)} ${n}`).join(', ')}`)
  }
  summary.push(`  routing           ${misrouted === 0 ? 'every method reached only peers that serve it' : `${misrouted} answers from peers that do not serve the method`}`)
  for (const f of failures) summary.push(`  failure: ${f}`)
  out.write(summary.join('\n') + '\n')
  return ok && misrouted === 0 ? 0 : 1
}

/**
 * When the thawed peer was back in rotation: the end of the first 1 s window after SIGCONT in
 * which it served at least half its fair share (1 / peers up) of the requests of its service
 * (answers from the peers of `otherService` are not counted).
 */
function backAfterThaw (samples, thaw, up, otherService) {
  const fair = 1 / Math.max(1, up)
  const after = samples.filter(([t]) => t >= thaw.at)
  for (let i = 0; i < after.length; i++) {
    const j = after.findIndex(([t]) => t >= after[i][0] + 1000)
    if (j < 0) break
    let all = 0
    for (const [ep, n] of after[j][1]) if (!otherService.has(ep)) all += n - (after[i][1].get(ep) ?? 0)
    const mine = (after[j][1].get(thaw.endpoint) ?? 0) - (after[i][1].get(thaw.endpoint) ?? 0)
    if (all > 0 && mine / all >= fair / 2) {
      return `back in rotation ${((after[j][0] - thaw.at) / 1000).toFixed(1)} s after SIGCONT (${Math.round((100 * mine) / all)}% of the requests in that second)`
    }
  }
  return 'NOT back in rotation before the end'
}

/**
 * What a peer's new state means to the client, in the timeline's words: an ejection is the
 * client's own verdict on a peer whose attempts kept failing (out of rotation for a while,
 * then tried again: client option `ejection`), not a death, so the words say which.
 */
function stateText (p, before) {
  if (p.removed) return 'removed'
  if (p.state === 'ejected') return 'ejected: its answers stopped, so it is out of rotation for a while'
  if (p.state === 'up') return before === 'ejected' ? 'on probation: its ejection ran out, so it is tried again' : 'up again'
  return p.state
}
