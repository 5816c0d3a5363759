// `zeromesh bench`: small request/reply throughput and latency at the given concurrencies
// against peers it starts itself (or --seeds), optionally compared in the same run with raw
// zeromq.js (Dealer/Router echo, one message per request, and the same with the requests of a
// turn coalesced 32 per message) and the same echo behind a central broker (a zeromq Proxy
// with 2 workers). Tables in autocannon's layout; --json.
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '../client/index.js'
import { writeKeyPair } from '../transport/keys.js'
import { child, drive, rawClient, killChildren, PAYLOAD } from './harness.js'

const here = (f) => fileURLToPath(new URL(f, import.meta.url))

function table (title, r) {
  const cells = [['Stat', '2.5%', '50%', '97.5%', '99%', 'Max'], ['Latency', ...[r.p2_5, r.p50, r.p97_5, r.p99, r.max].map((v) => `${v.toFixed(2)} ms`)]]
  const w = cells[0].map((_, i) => Math.max(...cells.map((row) => row[i].length)) + 2)
  const line = (l, m, r2) => l + w.map((n) => '─'.repeat(n)).join(m) + r2
  const row = (cols) => '│' + cols.map((c, i) => ` ${c.padEnd(w[i] - 1)}`).join('│') + '│'
  return [title, line('┌', '┬', '┐'), row(cells[0]), line('├', '┼', '┤'), row(cells[1]), line('└', '┴', '┘'), `Req/Sec: ${r.rps.toLocaleString('en-US')}`, ''].join('\n')
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
    const { line } = await child([here('../bin/zeromesh.js'), 'peer', '--threads', '0', '--cluster-key', cluster.secretFile, '--allow', me.publicFile])
    return { endpoint: line, security: { clusterPublicKey: cluster.publicKey, secretKey: me.secretKey } }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export async function runBench ({ seeds, security, concurrency = [1, 16, 256], seconds = 5, compare = false, secure = false, json = false, out = process.stdout, err = process.stderr }) {
  const tty = err.isTTY === true && !json
  const systems = []
  if (seeds === undefined) {
    const { line } = await child([here('../bin/zeromesh.js'), 'peer', '--threads', '0'])
    seeds = [line]
  }
  const client = new Client({ seeds, security, timeout: 30000 })
  await client.request('echo', PAYLOAD)
  systems.push({ name: 'zeromesh', one: () => client.request('echo', PAYLOAD), close: () => client.close() })
  if (secure) {
    const p = await securedPeer()
    const c = new Client({ seeds: [p.endpoint], security: p.security, timeout: 30000 })
    await c.request('echo', PAYLOAD)
    systems.push({ name: 'zeromesh, CURVE', one: () => c.request('echo', PAYLOAD), close: () => c.close() })
  }
  if (compare) {
    const raw = rawClient((await child([here('./raw-echo-server.js')])).line)
    systems.push({ name: 'raw zeromq.js', one: raw.one, close: raw.close })
    const rawX32 = rawClient((await child([here('./raw-echo-server.js')])).line, 32)
    systems.push({ name: 'raw zeromq.js, 32 per message', one: rawX32.one, close: rawX32.close })
    const broker = rawClient((await child([here('./broker.js'), '2'])).line)
    systems.push({ name: 'broker (zeromq Proxy, 2 workers)', one: broker.one, close: broker.close })
  }
  const results = []
  try {
    for (const c of concurrency) {
      for (const s of systems) {
        const onTick = tty ? (f) => err.write(`\r[${'#'.repeat(Math.round(f * 30)).padEnd(30)}] ${s.name}, ${c} in flight `) : undefined
        const r = await drive(c, s.one, { seconds, onTick })
        if (tty) err.write('\r' + ' '.repeat(80) + '\r')
        results.push({ system: s.name, concurrency: c, ...r })
        if (!json) out.write(table(`${s.name}, ${c} in flight, ${seconds} s`, r) + '\n')
      }
    }
  } finally {
    for (const s of systems) await s.close()
    killChildren()
  }
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
  if (!json) for (const r of ratios) out.write(`${r.concurrency} in flight: ${r.system} / ${r.versus}: ${r.rps}x req/s, ${r.p99}x p99\n`)
  const report = { date: new Date().toISOString(), machine: { cpus: os.availableParallelism(), model: os.cpus()[0]?.model, node: process.version }, seconds, results, ratios }
  if (json) out.write(JSON.stringify(report) + '\n')
  return 0
}
