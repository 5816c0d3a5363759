// One client process of bench/request-path/clients.js: drives `echo` at CONCURRENCY against SEEDS for
// SECONDS (after a warm-up) and prints { rps, p50, p99, ... } as one JSON line.
//   node bench/lib/client-process.js SEEDS CONCURRENCY SECONDS
import { Client } from '../../index.js'
import { drive, PAYLOAD } from '../../bin/bench/harness.js'

const [seeds, concurrency, seconds] = process.argv.slice(2)
const client = new Client({ seeds, timeout: 30000 })
await client.request('echo', PAYLOAD)
// Both peers up before measuring: a client seeded with two learns both at once.
for (let i = 0; i < 100 && client.peers().filter((p) => p.state === 'up').length < seeds.split(',').length; i++) await new Promise((resolve) => setTimeout(resolve, 20))
const r = await drive(Number(concurrency), () => client.request('echo', PAYLOAD), { seconds: Number(seconds) })
process.stdout.write(JSON.stringify(r) + '\n')
await client.close()
