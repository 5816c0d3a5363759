#!/usr/bin/env node
// The hostile-input soak: 3 peer processes, a client at 64 requests in flight, and a process
// sending random valid-looking hostile gossip and request frames (bench/lib/hostile-frames.js)
// the whole time. Reports failed requests, peer crashes, and each peer's RSS after warm-up
// and at the end. Loopback only; everything it started is killed on the way out.
//
//   node bench/cluster/soak.js [--minutes 20] [--rate 500]
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { child, killChildren } from '../../bin/bench/harness.js'
import { Client } from '../../index.js'

const { values } = parseArgs({ options: { minutes: { type: 'string' }, rate: { type: 'string' } } })
const minutes = Number(values.minutes ?? 20)
const rate = Number(values.rate ?? 500)
const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const FUZZER = fileURLToPath(new URL('../lib/hostile-frames.js', import.meta.url))
const rssMb = (pid) => { try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024 } catch { return NaN } }
const log = (s) => process.stderr.write(`[soak +${((Date.now() - t0) / 1000).toFixed(0)}s] ${s}\n`)

const t0 = Date.now()
const peers = []
const crashes = []
for (let i = 0; i < 3; i++) {
  const { child: c, line } = await child([BIN, 'peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', ...(i > 0 ? ['--seeds', peers[i - 1].endpoint] : [])])
  const p = { endpoint: line, pid: c.pid, child: c, samples: [] }
  c.on('exit', (code, signal) => { if (!p.stopping) crashes.push(`${line} exited ${code ?? signal}`) })
  peers.push(p)
}
log(`peers ${peers.map((p) => `${p.endpoint} (pid ${p.pid})`).join(', ')}`)

const client = new Client({ seeds: peers[0].endpoint })
const counts = { ok: 0, failed: {} }
let stop = false
const loops = Array.from({ length: 64 }, async (_, i) => {
  while (!stop) {
    try {
      if (i % 4 === 0) await client.request('whoami')
      else await client.request('echo', { i, at: Date.now() })
      counts.ok++
    } catch (err) {
      counts.failed[err.code] = (counts.failed[err.code] ?? 0) + 1
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
})

const fuzzer = spawn(process.execPath, [FUZZER, '--peers', peers.map((p) => p.endpoint).join(','), '--seconds', String(minutes * 60), '--rate', String(rate)], { stdio: ['ignore', 'pipe', 'inherit'] })
let fuzzed = ''
fuzzer.stdout.setEncoding('utf8').on('data', (d) => { fuzzed += d })
const fuzzerDone = new Promise((resolve) => fuzzer.on('exit', resolve))

const sampler = setInterval(() => {
  const t = (Date.now() - t0) / 1000
  for (const p of peers) p.samples.push([t, rssMb(p.pid)])
  log(`${counts.ok} ok, failed ${JSON.stringify(counts.failed)}, crashes ${crashes.length}, RSS ${peers.map((p) => Math.round(p.samples.at(-1)[1])).join('/')} MB`)
}, 10000)

await fuzzerDone
stop = true
clearInterval(sampler)
await Promise.all(loops)
const stats = client.stats()
await client.close()

const warmAt = Math.min(120, minutes * 60 * 0.1) // after 2 minutes (or a tenth of a short run)
const exits = []
for (const p of peers) {
  p.stopping = true
  const exited = new Promise((resolve) => p.child.on('exit', (code, signal) => resolve(code ?? signal)))
  try { process.kill(p.pid, 'SIGTERM') } catch {}
  exits.push(await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('no exit in 15 s'), 15000))]))
}
killChildren()

const failed = Object.values(counts.failed).reduce((a, b) => a + b, 0)
const row = (p) => {
  const after = p.samples.filter(([t]) => t >= warmAt)
  const warm = after[0]?.[1] ?? NaN
  const end = after.at(-1)?.[1] ?? NaN
  const max = Math.max(...after.map(([, r]) => r))
  const slope = after.length > 1 ? (end - warm) / ((after.at(-1)[0] - after[0][0]) / 60) : NaN
  return `| ${p.endpoint} | ${Math.round(warm)} | ${Math.round(max)} | ${Math.round(end)} | ${slope.toFixed(2)} |`
}
console.log(`soak: ${minutes} min, ${new Date(t0).toISOString()}, hostile frames ${fuzzed.trim()}`)
console.log(`client: ${counts.ok} requests ok, ${failed} failed ${JSON.stringify(counts.failed)}, retries ${stats.retries}, attempt timeouts ${stats.attemptTimeouts}`)
console.log(`peers: ${crashes.length} crashes ${JSON.stringify(crashes)}, exit on SIGTERM: ${exits.join(', ')}`)
console.log(`\n| peer | RSS MB after ${warmAt} s | max after | at the end | MB per minute after warm-up |\n| --- | ---: | ---: | ---: | ---: |`)
for (const p of peers) console.log(row(p))
process.exit(failed === 0 && crashes.length === 0 ? 0 : 1)
