// What the allocator settings of `zeromesh peer`'s sh header cost large values
// (docs/guides/deploying.md#memory): the command run as an install runs it (through its
// header), with the header's own MALLOC_MMAP_THRESHOLD_ and with one given in its
// environment, each echoing Buffers of --size bytes for --seconds at 4 in flight, in turn,
// round after round. Per threshold:
// req/s, its ratio to the header's (median of the per-round ratios) and the peer's minor page
// faults a request (/proc/PID/stat).
// Usage: node bench/work/allocator.js [--rounds 3] [--seconds 3] [--size 64000] [--thresholds 262144]
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Client } from '../../index.js'
import { child, killChildren, median } from '../../bin/bench/harness.js'
import { minorFaults } from '../lib/proc-threads.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '3' }, size: { type: 'string', default: '64000' }, thresholds: { type: 'string', default: '262144' } } })
const ROUNDS = Number(values.rounds)
const SECONDS = Number(values.seconds)
const VALUE = Buffer.alloc(Number(values.size), 7)
const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))

const env = { ...process.env }
for (const name of ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_']) delete env[name]
const systems = []
for (const threshold of [null, ...values.thresholds.split(',').map(Number)]) {
  const { child: c, line } = await child(['peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--log-level', 'silent'], { command: BIN, env: threshold === null ? env : { ...env, MALLOC_MMAP_THRESHOLD_: String(threshold) } })
  const client = new Client({ seeds: [line], timeout: 30000 })
  for (let i = 0; i < 500; i++) await client.request('echo', VALUE) // warm
  systems.push({ name: threshold === null ? 'the header\'s (32768)' : String(threshold), pid: c.pid, client, rps: [], faults: [] })
}
for (let round = 0; round < ROUNDS; round++) {
  for (const s of round % 2 === 0 ? systems : [...systems].reverse()) {
    const f0 = minorFaults(s.pid)
    const t0 = Date.now()
    let n = 0
    await Promise.all([0, 1, 2, 3].map(async () => { while (Date.now() - t0 < SECONDS * 1000) { await s.client.request('echo', VALUE); n++ } }))
    s.rps.push(n / ((Date.now() - t0) / 1000))
    s.faults.push((minorFaults(s.pid) - f0) / n)
  }
}
console.log(`\`node bench/work/allocator.js --rounds ${ROUNDS} --seconds ${SECONDS} --size ${VALUE.length} --thresholds ${values.thresholds}\`: \`zeromesh peer --demo-handlers\` as a command, echo of ${VALUE.length} B Buffers, 4 in flight\n`)
console.log('| MALLOC_MMAP_THRESHOLD_ | req/s | / the header\'s | minor faults a request |\n| --- | ---: | ---: | ---: |')
for (const s of systems) {
  const ratio = median(s.rps.map((r, i) => r / systems[0].rps[i]))
  console.log(`| ${s.name} | ${Math.round(median(s.rps))} | ${ratio.toFixed(2)}x | ${median(s.faults).toFixed(1)} |`)
}
for (const s of systems) await s.client.close()
killChildren()
