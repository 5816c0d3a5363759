// Clients sharing busy peers (issue 60): two `zeromesh peer` processes of one thread each and
// --max-queue 16, serving `spin` of about 25-35 ms; one greedy client process keeping 64 calls
// in flight, and two modest ones calling once at a time with 50 ms between calls (each asking
// for about a sixth of the peers' capacity). Measured, each from a cold start, in one run:
//   1. a modest client alone; 2. the greedy client alone; 3. the three together.
// Reports each client's req/s, p50 and p99, errors, retries and attempt timeouts, and the
// ratios the issue targets: each modest client's p99 beside the greedy one against alone (at
// most 3x), its req/s against alone (at least 0.8), the total against the greedy alone (within 5%).
//   node bench/work/fair.js [--seconds 10] [--n 2000000] [--greedy 64] [--gap 50] [--rounds 1]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    n: { type: 'string', default: '2000000' },
    greedy: { type: 'string', default: '64' },
    gap: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '1' },
    'max-queue': { type: 'string', default: '16' },
    json: { type: 'boolean' },
  },
})
const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const CLIENT = fileURLToPath(new URL('../lib/fair-client.js', import.meta.url))
const children = new Set()
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL') } catch {} })

function start (args) {
  const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(c)
  c.on('exit', () => children.delete(c))
  let out = ''
  c.stdout.on('data', (d) => { out += d })
  return { c, line: new Promise((resolve, reject) => { c.stdout.on('data', () => { if (out.includes('\n')) resolve(out.split('\n')[0].trim()) }); c.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`))) }), done: new Promise((resolve) => c.on('exit', () => resolve(out))) }
}

async function peers () {
  const a = start([BIN, 'peer', '--demo-handlers', '--threads', '1', '--max-queue', values['max-queue']])
  const ea = await a.line
  const b = start([BIN, 'peer', '--demo-handlers', '--threads', '1', '--max-queue', values['max-queue'], '--seeds', ea])
  const eb = await b.line
  return { seeds: `${ea},${eb}`, stop: () => { a.c.kill('SIGTERM'); b.c.kill('SIGTERM'); return Promise.all([a.done, b.done]) } }
}

const client = (seeds, mode, arg) => start([CLIENT, seeds, mode, String(arg), values.seconds, values.n])
const result = async (p) => JSON.parse((await p.done).trim().split('\n').pop())

async function phase (which) {
  const p = await peers()
  const runs = {}
  if (which === 'modest alone') runs.modest1 = client(p.seeds, 'modest', values.gap)
  if (which === 'greedy alone') runs.greedy = client(p.seeds, 'greedy', values.greedy)
  if (which === 'together') {
    runs.greedy = client(p.seeds, 'greedy', values.greedy)
    runs.modest1 = client(p.seeds, 'modest', values.gap)
    runs.modest2 = client(p.seeds, 'modest', values.gap)
  }
  const out = {}
  for (const [k, r] of Object.entries(runs)) out[k] = await result(r)
  await p.stop()
  return out
}

const rounds = []
for (let r = 0; r < Number(values.rounds); r++) {
  const modestAlone = await phase('modest alone')
  const greedyAlone = await phase('greedy alone')
  const together = await phase('together')
  const modests = [together.modest1, together.modest2]
  rounds.push({
    modestAlone: modestAlone.modest1,
    greedyAlone: greedyAlone.greedy,
    together,
    ratios: {
      modestP99: modests.map((m) => +(m.p99 / modestAlone.modest1.p99).toFixed(2)),
      modestRps: modests.map((m) => +(m.rps / modestAlone.modest1.rps).toFixed(2)),
      total: +((together.greedy.rps + together.modest1.rps + together.modest2.rps) / greedyAlone.greedy.rps).toFixed(2),
    },
  })
}
const report = { date: new Date().toISOString(), cpus: os.availableParallelism(), node: process.version, options: values, rounds }
if (values.json) console.log(JSON.stringify(report))
else {
  console.log(`Clients sharing 2 peers of 1 thread (--max-queue ${values['max-queue']}), spin n=${values.n}, ${values.seconds} s a phase (${report.cpus} cores, ${report.node}):`)
  console.log('| round | client | alone req/s | alone p50 / p99 ms | together req/s | together p50 / p99 ms | errors | retries | attempt timeouts |')
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  rounds.forEach((r, i) => {
    for (const k of ['greedy', 'modest1', 'modest2']) {
      const alone = k === 'greedy' ? r.greedyAlone : r.modestAlone
      const t = r.together[k]
      console.log(`| ${i + 1} | ${k} | ${alone.rps} | ${alone.p50} / ${alone.p99} | ${t.rps} | ${t.p50} / ${t.p99} | ${t.errors} | ${t.retries} | ${t.attemptTimeouts} |`)
    }
    console.log(`\nround ${i + 1}: modest p99 together / alone ${r.ratios.modestP99.join(', ')} (target at most 3); modest req/s together / alone ${r.ratios.modestRps.join(', ')} (at least 0.8); total together / greedy alone ${r.ratios.total} (within 5%)\n`)
  })
}
process.exit(0)
