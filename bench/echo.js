// Small request/reply through zeromesh (Client -> Peer) against raw zeromq.js
// (Dealer -> Router echo, one message per request), measured in one run, server in a child
// process, at several concurrencies. Usage: node bench/echo.js [--seconds 3] [--json]
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import { Client } from '../index.js'
import { child, drive as driveFor, rawClient, killChildren, PAYLOAD } from './harness.js'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, json: { type: 'boolean' }, concurrency: { type: 'string', default: '1,16,256' } } })
const SECONDS = Number(values.seconds)
const LEVELS = values.concurrency.split(',').map(Number)
const drive = (c, one) => driveFor(c, one, { seconds: SECONDS })

const results = []
const rawEp = (await child([fileURLToPath(new URL('./raw-echo-server.js', import.meta.url))])).line
// --threads 0: echo on the peer's main thread, so this measures the request path, not a thread hop
const peerEp = (await child([fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url)), 'peer', '--threads', '0'])).line
const raw = rawClient(rawEp)
const client = new Client({ seeds: [peerEp], timeout: 30000 })
await client.request('echo', PAYLOAD)
for (const c of LEVELS) {
  const r = await drive(c, raw.one)
  const z = await drive(c, () => client.request('echo', PAYLOAD))
  results.push({ concurrency: c, raw: r, zeromesh: z, ratio: +(z.rps / r.rps).toFixed(2) })
  if (!values.json) {
    console.error(`C=${c}: raw ${r.rps} req/s p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms | zeromesh ${z.rps} req/s p50 ${z.p50.toFixed(2)} p99 ${z.p99.toFixed(2)} ms | ratio ${(z.rps / r.rps).toFixed(2)}`)
  }
}
raw.close()
await client.close()
killChildren()
const report = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, seconds: SECONDS, results }
console.log(JSON.stringify(report, null, values.json ? 0 : 2))
process.exit(0)
