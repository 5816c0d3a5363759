// `zeromesh bench`: small request/reply throughput and latency at the given concurrencies
// against peers it starts itself (or --seeds), optionally compared in the same run with raw
// zeromq.js (Dealer/Router echo, one message per request, and the same with the requests of a
// turn coalesced 32 per message) and the same echo behind a central broker (a zeromq Proxy
// with 2 workers). One side-by-side table of req/s and p99 per system, then the ratios; --json.
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '../../client/index.js'
import { writeKeyPair } from '../../transport/keys.js'
import { child, drive, rawClient, rawClientNonBlocking, killChildren, payloadOf } from './harness.js'

const here = (f) => fileURLToPath(new URL(f, import.meta.url))
const WARM_UP_S = 1 // at most, for each system at each level before the measured pass (see runBench); half the duration when that is shorter

/**
 * One table for the whole run, a row per system: req/s and p99 at each concurrency side by
 * side, as bench/RESULTS.md shows them.
 */
function sideBySide (results, systems, concurrency, seconds, payload) {
  const big = payload >= 1024 // MB/s matter more than req/s for large payloads
  const head = ['system', ...concurrency.map((c) => `req/s @${c}`), ...concurrency.map((c) => `p99 ms @${c}`), ...(big ? concurrency.map((c) => `MB/s @${c}`) : [])]
  const rows = systems.map((s) => {
    const at = (c) => results.find((r) => r.system === s.name && r.concurrency === c)
    return [s.name, ...concurrency.map((c) => at(c).rps.toLocaleString('en-US')), ...concurrency.map((c) => at(c).p99.toFixed(2)), ...(big ? concurrency.map((c) => at(c).mbps.toFixed(1)) : [])]
  })
  const w = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i].length)))
  const line = (r) => r.map((cell, i) => i === 0 ? cell.padEnd(w[i]) : cell.padStart(w[i])).join('  ')
  return [`${seconds} s per measurement, echo requests of ~${payload} bytes; requests in flight after @`, '', line(head), line(head.map((_, i) => '-'.repeat(w[i]))), ...rows.map(line), ''].join('\n')
}

/**
 * A peer of its own run with CURVE: a cluster key and a client key made for the run in a
 * temporary directory (removed at once: the peer and the client have read them).
 */
async function securedPeer () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-bench-'))
  try {
    const cluster = writeKeyPair(path.join(dir, 'cluster'))
    const me = writeKeyPair(path.join(dir, 'client'))
    const { line } = await child([here('../../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0', '--cluster-key', cluster.secretFile, '--allow', me.publicFile])
    return { endpoint: line, security: { clusterPublicKey: cluster.publicKey, secretKey: me.secretKey } }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export async function runBench ({ seeds, security, concurrency = [1, 16, 256], seconds = 5, compare = false, secure = false, payload = 40, json = false, out = process.stdout, err = process.stderr }) {
  const PAYLOAD = payloadOf(payload)
  const tty = err.isTTY === true && !json
  const systems = []
  if (seeds === undefined) {
    const { line } = await child([here('../../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0'])
    seeds = [line]
  }
  const client = new Client({ seeds, security, timeout: 60000 })
  await client.request('echo', PAYLOAD)
  systems.push({ name: 'zeromesh', one: () => client.request('echo', PAYLOAD), close: () => client.close() })
  if (secure) {
    const p = await securedPeer()
    const c = new Client({ seeds: [p.endpoint], security: p.security, timeout: 60000 })
    await c.request('echo', PAYLOAD)
    systems.push({ name: 'zeromesh, CURVE', one: () => c.request('echo', PAYLOAD), close: () => c.close() })
  }
  if (compare) {
    const raw = rawClient((await child([here('./raw-echo-server.js')])).line, 1, PAYLOAD)
    systems.push({ name: 'raw zeromq.js', one: raw.one, close: raw.close })
    const rawX32 = rawClient((await child([here('./raw-echo-server.js')])).line, 32, PAYLOAD)
    systems.push({ name: 'raw zeromq.js, 32 per message', one: rawX32.one, close: rawX32.close })
    const rawNb = rawClientNonBlocking((await child([here('./raw-echo-server.js')])).line, 32, PAYLOAD)
    systems.push({ name: 'raw zeromq.js, 32 per frame, non-blocking', one: rawNb.one, close: rawNb.close })
    const rawMp = rawClientNonBlocking((await child([here('./raw-echo-server.js'), 'msgpack'])).line, 32, PAYLOAD, { msgpack: true })
    systems.push({ name: 'raw + msgpackr both ends, 32 per frame', one: rawMp.one, close: rawMp.close })
    const broker = rawClient((await child([here('./broker.js'), '2'])).line, 1, PAYLOAD)
    systems.push({ name: 'broker (zeromq Proxy, 2 workers)', one: broker.one, close: broker.close })
  }
  const results = []
  const total = concurrency.length * systems.length
  try {
    for (const c of concurrency) {
      // Every system is driven at this level once (1 s, or half the duration), unmeasured,
      // before any is measured: the first one measured in a fresh run otherwise ran while
      // both its processes were still warming up (at 1 in flight zeromesh, measured first,
      // read 0.80x raw + msgpackr in its first 3 s and 0.90-0.95x after).
      if (systems.length > 1) for (const s of systems) await drive(c, s.one, { seconds: Math.min(WARM_UP_S, seconds / 2), warmupMs: 0 })
      for (const s of systems) {
        const done = results.length
        const onTick = tty ? (f) => err.write(`\r[${'#'.repeat(Math.round(((done + f) / total) * 30)).padEnd(30)}] ${done + 1}/${total} ${s.name}, ${c} in flight `.padEnd(100)) : undefined
        const r = await drive(c, s.one, { seconds, onTick })
        // MB/s of payload carried, both ways (a request and its reply each carry it).
        results.push({ system: s.name, concurrency: c, payload, ...r, mbps: +((r.rps * payload * 2) / 1e6).toFixed(1) })
      }
    }
    if (tty) err.write('\r' + ' '.repeat(100) + '\r')
  } finally {
    for (const s of systems) await s.close()
    killChildren()
  }
  if (!json) out.write(sideBySide(results, systems, concurrency, seconds, payload) + '\n')
  // Each zeromesh system against every other system, in the same run.
  const ratios = []
  for (const c of concurrency) {
    const at = results.filter((r) => r.concurrency === c)
    for (const z of at.filter((r) => r.system.startsWith('zeromesh'))) {
      for (const other of at.filter((r) => r !== z && !(z.system === 'zeromesh' && r.system.startsWith('zeromesh')) && (compare || r.system.startsWith('zeromesh')))) {
        ratios.push({ concurrency: c, system: z.system, versus: other.system, rps: +(z.rps / other.rps).toFixed(2), p99: +(z.p99 / other.p99).toFixed(2) })
      }
    }
  }
  if (!json && ratios.length > 0) {
    const pairs = [...new Set(ratios.map((r) => `${r.system} / ${r.versus}`))]
    const head = ['ratio', ...concurrency.map((c) => `req/s @${c}`), ...concurrency.map((c) => `p99 @${c}`)]
    const rows = pairs.map((pair) => {
      const at = (c) => ratios.find((r) => `${r.system} / ${r.versus}` === pair && r.concurrency === c)
      return [pair, ...concurrency.map((c) => `${at(c).rps.toFixed(2)}x`), ...concurrency.map((c) => `${at(c).p99.toFixed(2)}x`)]
    })
    const w = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i].length)))
    const line = (r) => r.map((cell, i) => i === 0 ? cell.padEnd(w[i]) : cell.padStart(w[i])).join('  ')
    out.write([line(head), line(head.map((_, i) => '-'.repeat(w[i]))), ...rows.map(line), ''].join('\n'))
  }
  const report = { date: new Date().toISOString(), machine: { cpus: os.availableParallelism(), model: os.cpus()[0]?.model, node: process.version }, seconds, results, ratios }
  if (json) out.write(JSON.stringify(report) + '\n')
  return 0
}
