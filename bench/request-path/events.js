// What an event costs against a request (issue 58's targets), on `zeromesh peer --threads 0`
// processes whose handler module (bench/lib/events-handlers.js) serves `echo` and subscribes to
// `bench.ping`, with the same ~40-byte payload:
//   1. one peer: `request` (client.request('echo')) against `publish` (client.publish('bench.ping'),
//      acknowledged) at each level, round after round, rotated; per-round ratio publish / request
//      (target at 256 in flight: at least 0.9);
//   2. five peers, all subscribed in one group: at 16 in flight, `publish` (one delivery, to one
//      of them) against `broadcast` (five deliveries, one to each), their p99 per round and the
//      ratio broadcast / publish (target: at most 2).
//   node bench/request-path/events.js --rounds 5 --seconds 2 --concurrency 1,256
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import { child, compareWays, waysOptions, killChildren, drive, median, PAYLOAD } from '../../bin/bench/harness.js'
import { Client } from '../../index.js'

const { seconds, rounds, levels } = waysOptions()
const bin = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const handlers = fileURLToPath(new URL('../lib/events-handlers.js', import.meta.url))
const peer = (seeds) => child([bin, 'peer', '--handlers', handlers, '--threads', '0', '--log-level', 'silent', ...(seeds ? ['--seeds', seeds] : [])])

const clients = []
try {
  // 1. publish with an ack against a request, one peer.
  const one = (await peer()).line
  const c = new Client({ seeds: [one], timeout: 30000 })
  clients.push(c)
  await c.request('echo', PAYLOAD)
  await c.publish('bench.ping', PAYLOAD)
  process.stdout.write('### publish (acknowledged) against request, one peer\n\n')
  await compareWays({ request: () => c.request('echo', PAYLOAD), publish: () => c.publish('bench.ping', PAYLOAD) }, { levels, rounds, seconds })

  // 2. broadcast to five peers against a publish, at 16 in flight.
  const five = [one]
  for (let i = 0; i < 4; i++) five.push((await peer(one)).line)
  const b = new Client({ seeds: five, timeout: 30000 })
  clients.push(b)
  for (let i = 0; i < 100; i++) {
    const out = await b.broadcast('bench.ping', PAYLOAD)
    if (out.delivered.length === 5) break
    await new Promise((resolve) => setTimeout(resolve, 100)) // until the client knows all five
  }
  const ways = { publish: () => b.publish('bench.ping', PAYLOAD), broadcast: () => b.broadcast('bench.ping', PAYLOAD) }
  const got = { publish: [], broadcast: [] }
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['publish', 'broadcast'] : ['broadcast', 'publish']
    for (const name of order) got[name].push(await drive(16, ways[name], { seconds }))
  }
  const ratios = got.broadcast.map((x, i) => x.p99 / got.publish[i].p99)
  process.stdout.write(`\n### broadcast to 5 peers against publish, 16 in flight\n\n${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores, Node ${process.version}; ${rounds} rounds of ${seconds} s\n\n`)
  process.stdout.write('| way | events/s (median) | p50 ms | p99 ms (median) |\n| --- | ---: | ---: | ---: |\n')
  for (const name of ['publish', 'broadcast']) {
    process.stdout.write(`| ${name} | ${Math.round(median(got[name].map((x) => x.rps))).toLocaleString('en-US')} | ${median(got[name].map((x) => x.p50)).toFixed(3)} | ${median(got[name].map((x) => x.p99)).toFixed(3)} |\n`)
  }
  process.stdout.write(`\nbroadcast p99 / publish p99 per round: median ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})\n`)
} finally {
  for (const c of clients) await c.close()
  killChildren()
}
