// Runs `zeromesh bench --json` several rounds, each in a fresh process, and prints the
// medians as Markdown tables for bench/RESULTS.md: req/s and p99 per system and concurrency,
// and each zeromesh system's ratios to every other system, median of the per-round ratios.
//
//   node bench/request-path/rounds.js ROUNDS [bench options...]
//   node bench/request-path/rounds.js 3 --compare --secure --duration 5
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import os from 'node:os'

const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const rounds = Number(process.argv[2])
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) {
  process.stderr.write('usage: node bench/request-path/rounds.js ROUNDS [zeromesh bench options...]\n')
  process.exit(2)
}
const args = process.argv.slice(3)

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const reports = []
for (let i = 0; i < rounds; i++) {
  process.stderr.write(`round ${i + 1} of ${rounds}: zeromesh bench ${args.join(' ')}\n`)
  const out = execFileSync(process.execPath, [BIN, 'bench', '--json', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 3600000 })
  reports.push(JSON.parse(out.trim().split('\n').pop()))
}

const systems = [...new Set(reports[0].results.map((r) => r.system))]
const levels = [...new Set(reports[0].results.map((r) => r.concurrency))]
const cell = (system, c, key) => median(reports.map((rep) => rep.results.find((r) => r.system === system && r.concurrency === c)[key]))

const lines = []
lines.push(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; median of ${rounds} rounds of \`zeromesh bench ${args.join(' ')}\` (each round a fresh process, every system measured in turn)`)
lines.push('')
lines.push(`| system | ${levels.map((c) => `req/s at ${c}`).join(' | ')} | ${levels.map((c) => `p99 ms at ${c}`).join(' | ')} |`)
lines.push(`| --- | ${levels.map(() => '---:').join(' | ')} | ${levels.map(() => '---:').join(' | ')} |`)
for (const s of systems) {
  lines.push(`| ${s} | ${levels.map((c) => Math.round(cell(s, c, 'rps')).toLocaleString('en-US')).join(' | ')} | ${levels.map((c) => cell(s, c, 'p99').toFixed(2)).join(' | ')} |`)
}
lines.push('')
lines.push('| ratio (median of the rounds\' ratios) | ' + levels.map((c) => `req/s at ${c}`).join(' | ') + ' | ' + levels.map((c) => `p99 at ${c}`).join(' | ') + ' |')
lines.push(`| --- | ${levels.map(() => '---:').join(' | ')} | ${levels.map(() => '---:').join(' | ')} |`)
const pairs = [...new Set(reports[0].ratios.map((r) => `${r.system} / ${r.versus}`))]
for (const pair of pairs) {
  const of = (c, key) => median(reports.map((rep) => rep.ratios.find((r) => `${r.system} / ${r.versus}` === pair && r.concurrency === c)?.[key]).filter((x) => x !== undefined))
  lines.push(`| ${pair} | ${levels.map((c) => `${of(c, 'rps').toFixed(2)}x`).join(' | ')} | ${levels.map((c) => `${of(c, 'p99').toFixed(2)}x`).join(' | ')} |`)
}
process.stdout.write(lines.join('\n') + '\n')
