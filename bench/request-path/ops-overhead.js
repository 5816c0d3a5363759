// What the operations endpoint costs on the request path: two `zeromesh peer` processes, one
// plain and one with --http (its metrics on, the latency histogram filled per request), each
// driven by its own client in turn, round after round, at each concurrency; medians and the
// per-round ratio. Between rounds /metrics is scraped, so the counters are seen moving.
//
//   node bench/request-path/ops-overhead.js [--rounds 7] [--seconds 2] [--concurrency 1,256]
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import { Client } from '../../index.js'
import { child, drive, killChildren, median, PAYLOAD } from '../../bin/bench/harness.js'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '7' },
    concurrency: { type: 'string', default: '1,256' },
  },
})
const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const seconds = Number(values.seconds)
const rounds = Number(values.rounds)
const levels = values.concurrency.split(',').map(Number)

async function peer (extra) {
  const { child: c, line } = await child([BIN, 'peer', '--demo-handlers', '--threads', '0', '--log-level', 'silent', ...extra])
  const client = new Client({ seeds: [line], timeout: 30000 })
  await client.request('echo', PAYLOAD)
  return { c, client, one: () => client.request('echo', PAYLOAD) }
}

// The --http port is picked up front (the peer's log, which would name it, is silenced here).
const net = await import('node:net')
const httpPort = await new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
const plain = await peer([])
const ops = await peer(['--http', String(httpPort)])
const scrape = async () => {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text()
  return Number(/^zeromesh_peer_requests_total (\d+)$/m.exec(text)?.[1])
}
try {
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; ${rounds} rounds of ${seconds} s, plain peer and peer with --http in turn\n\n`)
  process.stdout.write('| in flight | plain req/s (p99 ms) | with --http req/s (p99 ms) | with / plain per round: median (range) | requests_total scraped after each round |\n| ---: | ---: | ---: | --- | --- |\n')
  for (const c of levels) {
    const got = { plain: [], ops: [] }
    const scraped = []
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['plain', 'ops'] : ['ops', 'plain']
      for (const name of order) got[name].push(await drive(c, (name === 'plain' ? plain : ops).one, { seconds }))
      scraped.push(await scrape())
    }
    const cell = (name) => `${Math.round(median(got[name].map((x) => x.rps))).toLocaleString('en-US')} (${median(got[name].map((x) => x.p99)).toFixed(2)})`
    const ratios = got.ops.map((x, i) => x.rps / got.plain[i].rps)
    process.stdout.write(`| ${c} | ${cell('plain')} | ${cell('ops')} | ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}) | ${scraped.map((n) => n.toLocaleString('en-US')).join(', ')} |\n`)
  }
} finally {
  await plain.client.close()
  await ops.client.close()
  killChildren()
}
