// One client process of the lab (bench/cluster/lab.js), run inside a client host's network
// namespace: a real `Client` (the default subset, the host's zone) driving steady load: each
// call is an idempotent request (8 in 10), a non-idempotent one (1 in 10) or a publish (1 in
// 10), started at `rate` a second, with at most `maxInflight` in flight.
//
//   node bench/cluster/lab/client.js '{"seeds":[...],"zone":"a","rate":100,"security":{...},"dns":{...}}'
//
// Prints {"ready":true} once its subset is up, then answers each JSON line on stdin
// ({ id, cmd }) with one line: `phase` (outcomes from now on count under `name`), `rate` (calls a
// second from now on), `report` (every phase's outcomes, where answers came from), `view` (the
// peers up in its table). `stop` stops starting calls, waits for those in flight (bounded),
// answers with the report and exits 0.
import { createInterface } from 'node:readline'
import { Client } from '../../../index.js'

const config = JSON.parse(process.argv[2])
// What the client warns of (refused handshakes), counted by kind and code for the report.
const warnings = {}
const count = (fields, message) => { const k = `${fields?.kind ?? ''} ${fields?.code ?? ''} ${String(message).slice(0, 60)}`; warnings[k] = (warnings[k] ?? 0) + 1 }
const logger = { debug () {}, info () {}, warn: count, error: count }
const client = new Client({
  logger,
  seeds: config.seeds,
  zone: config.zone,
  security: config.security,
  dns: config.dns,
  timeout: config.timeout ?? 5000,
  ...(config.attemptTimeout !== undefined ? { attemptTimeout: config.attemptTimeout } : {}),
})
const TICK_MS = 10
const IN_DOUBT = new Set(['ERR_ZEROMESH_CONNECTION_LOST', 'ERR_ZEROMESH_TIMEOUT'])

let rate = config.rate
let phase = 'start'
let inflight = 0
let carry = 0
let n = 0
const phases = new Map()
function bucket () {
  let b = phases.get(phase)
  if (b === undefined) phases.set(phase, (b = { idempotent: { ok: 0, failed: {} }, nonIdempotent: { ok: 0, failed: {}, inDoubt: 0 }, publish: { ok: 0, failed: {} }, servedBy: {}, samples: [] }))
  return b
}

const began = Date.now()
async function call () {
  const b = bucket()
  const at = Date.now()
  const upThen = up().length
  const kind = n % 10 === 9 ? 'publish' : n % 10 === 8 ? 'nonIdempotent' : 'idempotent'
  n++
  inflight++
  try {
    if (kind === 'publish') {
      await client.publish('lab.tick', n)
    } else {
      const ep = await client.request(kind === 'idempotent' ? 'work' : 'order', null, { idempotent: kind === 'idempotent' })
      b.servedBy[ep] = (b.servedBy[ep] ?? 0) + 1
    }
    b[kind].ok++
  } catch (err) {
    const code = err.code ?? String(err)
    b[kind].failed[code] = (b[kind].failed[code] ?? 0) + 1
    if (kind === 'nonIdempotent' && IN_DOUBT.has(code)) b[kind].inDoubt++
    // The first few failures of each kind, for the lab's diagnosis: when (ms since this client
    // began), with how many peers up then and now, and what the error said.
    if (b.samples.filter((x) => x.kind === kind).length < 2) b.samples.push({ kind, startedMs: at - began, took: Date.now() - at, upThen, upNow: up().length, message: String(err.message).slice(0, 160) })
  } finally {
    inflight--
  }
}

let stopping = false
const timer = setInterval(() => {
  if (stopping) return
  carry += rate * TICK_MS / 1000
  const max = config.maxInflight ?? 256
  while (carry >= 1 && inflight < max) { carry--; call() }
  if (carry > 10) carry = 10 // behind (in-flight cap): never a burst to catch up
}, TICK_MS)

function up () {
  return client.peers().filter((p) => p.state === 'up').map((p) => p.endpoint)
}

// Ready once its table holds `expectPeers` peers up (its subset, or every peer when fewer).
const until = Date.now() + (config.readyTimeout ?? 60000)
while (up().length < (config.expectPeers ?? 1)) {
  if (Date.now() > until) break
  await new Promise((resolve) => setTimeout(resolve, 50))
}
process.stdout.write(JSON.stringify({ ready: true, up: up().length, pid: process.pid }) + '\n')

const report = () => ({ phases: Object.fromEntries(phases), stats: client.stats(), warnings })
createInterface({ input: process.stdin }).on('line', async (line) => {
  const q = JSON.parse(line)
  if (q.cmd === 'phase') phase = q.name
  if (q.cmd === 'rate') rate = q.rate
  if (q.cmd === 'stop') {
    stopping = true
    clearInterval(timer)
    const end = Date.now() + 10000
    while (inflight > 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
    process.stdout.write(JSON.stringify({ id: q.id, ...report() }) + '\n')
    await client.close()
    process.exit(0)
  }
  const answer = q.cmd === 'report' ? report() : q.cmd === 'view' ? { up: up() } : {}
  process.stdout.write(JSON.stringify({ id: q.id, ...answer }) + '\n')
})
