// At 1 in flight, which side costs: the raw Dealer/Router echo pair; a bare Dealer that sends
// zeromesh request frames made beforehand to a zeromesh peer (the peer's cost alone); and the
// zeromesh client to the same peer. Measured in turn, round after round; medians.
// Usage: node bench/one-in-flight.js [--rounds 5] [--seconds 2]
import { fileURLToPath } from 'node:url'
import * as zmq from 'zeromq'
import { Client } from '../index.js'
import * as codec from '../protocol/codec.js'
import { parseArgs } from 'node:util'
import { child, drive, PAYLOAD, rawClient } from './harness.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '2' } } })
const peer = await child([fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url)), 'peer', '--demo-handlers', '--threads', '0'])
const rawSrv = await child([fileURLToPath(new URL('../bench/raw-echo-server.js', import.meta.url))])
const zc = new Client({ seeds: [peer.line], timeout: 30000 })
await zc.request('echo', PAYLOAD)
const raw = rawClient(rawSrv.line, 1, PAYLOAD)
await raw.one()
const d = new zmq.Dealer({ linger: 0 })
d.connect(peer.line)
let id = 1
const mini = async () => { await d.send(codec.encodeRequest([[id++, 'echo', PAYLOAD, 30000]])); await d.receive() }
await mini()
const systems = { 'raw Dealer -> raw echo': () => raw.one(), 'bare Dealer -> zeromesh peer': mini, 'zeromesh client -> peer': () => zc.request('echo', PAYLOAD) }
const res = Object.fromEntries(Object.keys(systems).map((k) => [k, []]))
for (let r = 0; r < Number(values.rounds); r++) for (const [k, f] of Object.entries(systems)) res[k].push(await drive(1, f, { seconds: Number(values.seconds) }))
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`1 in flight, medians of ${values.rounds} rounds of ${values.seconds} s`)
for (const [k, xs] of Object.entries(res)) console.log(`${k.padEnd(30)} ${String(med(xs.map((x) => x.rps))).padStart(7)} req/s, p50 ${med(xs.map((x) => x.p50))} ms`)
await zc.close(); raw.close(); d.close(); peer.child.kill('SIGKILL'); rawSrv.child.kill('SIGKILL'); process.exit(0)
