// Where zeromesh's gap to raw zeromq.js at 1 in flight sits, side by side: each side of
// zeromesh against a bare stand-in for the other, in the same rounds (issue 78, item 1).
//   raw -> raw          harness.js rawClient against raw-echo-server.js (the baseline)
//   raw -> peer         a bare Dealer sending zeromesh REQUEST frames (encodeRequest per call)
//                       to a `zeromesh peer --threads 0` with the demo handlers: the peer's cost
//   client -> wire echo a zeromesh Client against bench/lib/echo-wire-server.js (a ROUTER that
//                       decodes each request and encodes its echo, nothing else): the client's
//   client -> peer      a zeromesh Client against the same peer: the whole of it
// Each pair in its own processes; the order rotates each round. Prints, per way, the median
// req/s and p99 over the rounds and the median of its per-round ratios to raw -> raw.
//
// Usage: node bench/request-path/halves.js [--rounds 5] [--seconds 3]
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import * as zmq from 'zeromq'
import { child, drive, rawClient, PAYLOAD, median, killChildren } from '../../bin/bench/harness.js'
import { encodeRequest } from '../../protocol/codec.js'
import { Client } from '../../client/index.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '3' } } })
const ROUNDS = Number(values.rounds)
const SECONDS = Number(values.seconds)
const at = (f) => fileURLToPath(new URL(f, import.meta.url))

/** A bare Dealer that sends each call as a REQUEST frame of one entry and takes the next message as its answer. */
function rawRequests (endpoint) {
  const sock = new zmq.Dealer({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  sock.connect(endpoint)
  let waiting = null
  let id = 1
  ;(async () => { try { while (true) { await sock.receive(); const r = waiting; waiting = null; r?.() } } catch {} })()
  return {
    one: () => new Promise((resolve) => { waiting = resolve; sock.send(encodeRequest([[id++, 'echo', PAYLOAD, 30000]])) }),
    close: () => sock.close(),
  }
}

function client (seeds, options = {}) {
  const c = new Client({ seeds, timeout: 30000, ...options })
  return { one: () => c.request('echo', PAYLOAD), close: () => c.close() }
}

const peer = async () => (await child([at('../../bin/zeromesh.js'), 'peer', '--demo-handlers', '--threads', '0', '--log-level', 'silent'])).line
const ways = {
  'raw -> raw': rawClient((await child([at('../../bin/bench/raw-echo-server.js')])).line),
  'raw -> peer': rawRequests(await peer()),
  'client -> wire echo': client([(await child([at('../lib/echo-wire-server.js')])).line], { discover: false }),
  'client -> peer': client([await peer()]),
}
try {
  for (const w of Object.values(ways)) for (let i = 0; i < 1000; i++) await w.one() // warm, and every connection up
  const names = Object.keys(ways)
  const got = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < ROUNDS; r++) {
    const order = [...names]
    for (let i = 0; i < r % order.length; i++) order.push(order.shift())
    for (const n of order) got[n].push(await drive(1, ways[n].one, { seconds: SECONDS }))
  }
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}; 1 in flight, ${ROUNDS} rounds of ${SECONDS} s\n\n`)
  process.stdout.write('| way | req/s | p50 ms | p99 ms | req/s over raw -> raw, per round: median (range) |\n| --- | ---: | ---: | ---: | --- |\n')
  for (const n of names) {
    const rs = got[n].map((x, i) => x.rps / got['raw -> raw'][i].rps)
    const cell = (k, d) => median(got[n].map((x) => x[k])).toFixed(d)
    process.stdout.write(`| ${n} | ${Math.round(median(got[n].map((x) => x.rps))).toLocaleString('en-US')} | ${cell('p50', 3)} | ${cell('p99', 3)} | ${median(rs).toFixed(3)} (${Math.min(...rs).toFixed(2)}-${Math.max(...rs).toFixed(2)}) |\n`)
  }
} finally {
  for (const w of Object.values(ways)) await w.close()
  killChildren()
}
process.exit(0)
