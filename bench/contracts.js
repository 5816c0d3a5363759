// What a contract's checks cost on the request path: one `zeromesh peer --threads 0` serving
// `echo` plain and `bench.echo` through a contract (bench/contract-handlers.js: a zod object
// of the ~40-byte payload), one client, three ways measured in turn, round after round:
//   plain      client.request('echo', payload): no contract
//   peer       client.request('bench.echo', payload): checked at the peer only
//   both       client.service(bench).echo(payload): checked in the client, then at the peer
// Medians of the rounds, and the per-round ratio to plain.
//   node bench/contracts.js --rounds 5 --seconds 2 --concurrency 1,256
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import { child, drive, killChildren, median, PAYLOAD } from './harness.js'
import { Client } from '../index.js'
import { bench } from './contract-handlers.js'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,256' },
  },
})
const seconds = Number(values.seconds)
const rounds = Number(values.rounds)
const levels = values.concurrency.split(',').map(Number)
const bin = fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url))
const handlers = fileURLToPath(new URL('./contract-handlers.js', import.meta.url))

const { line } = await child([bin, 'peer', '--handlers', handlers, '--threads', '0', '--log-level', 'silent'])
const client = new Client({ seeds: [line], timeout: 30000 })
const svc = client.service(bench)
const ways = {
  plain: () => client.request('echo', PAYLOAD),
  peer: () => client.request('bench.echo', PAYLOAD),
  both: () => svc.echo(PAYLOAD),
}
try {
  for (const one of Object.values(ways)) await one()
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; ${rounds} rounds of ${seconds} s\n\n`)
  process.stdout.write('| in flight | plain req/s (p50 ms) | peer checks req/s (p50 ms) | both check req/s (p50 ms) | peer / plain per round: median (range) | both / plain | p99 ms plain, peer, both |\n| ---: | ---: | ---: | ---: | --- | --- | --- |\n')
  for (const c of levels) {
    const got = { plain: [], peer: [], both: [] }
    for (let r = 0; r < rounds; r++) {
      const order = Object.keys(ways)
      for (let i = 0; i < r % order.length; i++) order.push(order.shift()) // rotate who goes first
      for (const name of order) got[name].push(await drive(c, ways[name], { seconds }))
    }
    const cell = (name) => `${Math.round(median(got[name].map((x) => x.rps))).toLocaleString('en-US')} (${median(got[name].map((x) => x.p50)).toFixed(3)})`
    const ratio = (name) => { const rs = got[name].map((x, i) => x.rps / got.plain[i].rps); return `${median(rs).toFixed(2)} (${Math.min(...rs).toFixed(2)}-${Math.max(...rs).toFixed(2)})` }
    process.stdout.write(`| ${c} | ${cell('plain')} | ${cell('peer')} | ${cell('both')} | ${ratio('peer')} | ${ratio('both')} | ${['plain', 'peer', 'both'].map((n) => median(got[n].map((x) => x.p99)).toFixed(2)).join(', ')} |\n`)
  }
} finally {
  await client.close()
  killChildren()
}
