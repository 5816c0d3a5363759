// Scaling in clients: 1, 4 and 16 client processes (each at the same concurrency) against 2
// peer processes, on this machine; the sum of their req/s and the worst of their p99s.
//   node bench/request-path/clients.js [--processes 1,4,16] [--concurrency 16] [--seconds 5] [--rounds 3]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import { child, killChildren } from '../../bin/bench/harness.js'

const { values } = parseArgs({
  options: {
    processes: { type: 'string', default: '1,4,16' },
    concurrency: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
  },
})
const here = (f) => fileURLToPath(new URL(f, import.meta.url))
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }

/** Runs `n` client processes at once; resolves with their results. */
function clients (n, seeds) {
  return Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [here('../lib/client-process.js'), seeds.join(','), values.concurrency, values.seconds], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    c.stdout.setEncoding('utf8').on('data', (d) => { out += d })
    c.on('exit', (code) => code === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(`a client process exited ${code}`)))
  })))
}

const a = (await child([here('../../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0', '--log-level', 'warn'])).line
const b = (await child([here('../../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0', '--log-level', 'warn', '--seeds', a])).line
try {
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; 2 peer processes (echo on the main thread), client processes at ${values.concurrency} in flight each, ${values.seconds} s, median of ${values.rounds} rounds\n\n`)
  process.stdout.write('| client processes | req/s, all together | per process | worst p99 ms | median p50 ms |\n| ---: | ---: | ---: | ---: | ---: |\n')
  for (const n of values.processes.split(',').map(Number)) {
    const rounds = []
    for (let r = 0; r < Number(values.rounds); r++) rounds.push(await clients(n, [a, b]))
    const total = median(rounds.map((rs) => rs.reduce((s, x) => s + x.rps, 0)))
    const p99 = median(rounds.map((rs) => Math.max(...rs.map((x) => x.p99))))
    const p50 = median(rounds.map((rs) => median(rs.map((x) => x.p50))))
    process.stdout.write(`| ${n} | ${Math.round(total).toLocaleString('en-US')} | ${Math.round(total / n).toLocaleString('en-US')} | ${p99.toFixed(2)} | ${p50.toFixed(2)} |\n`)
  }
} finally {
  killChildren()
}
