// A Node client of the same commit, driven by the Python tests: it waits until `--peers` peers
// are up, prints "ready", then keeps `--concurrency` requests of `--method` in flight for
// `--seconds`, and prints one JSON line: { ok, failed: { code: n }, byEndpoint: { ep: n } }.
// With `--cluster-pub` and `--key` (files, as `zeromesh keygen` writes them) it is a secured client.
import { parseArgs } from 'node:util'
import { readFileSync } from 'node:fs'
import { Client } from '../../../index.js'

const { values } = parseArgs({ options: {
  seeds: { type: 'string' }, method: { type: 'string', default: 'whoami' }, peers: { type: 'string', default: '1' },
  concurrency: { type: 'string', default: '8' }, seconds: { type: 'string', default: '2' }, args: { type: 'string', default: 'null' },
  'cluster-pub': { type: 'string' }, key: { type: 'string' }, timeout: { type: 'string', default: '5000' },
} })
const key = (file) => readFileSync(file, 'utf8').trim()
const security = values.key === undefined ? undefined : { clusterPublicKey: key(values['cluster-pub']), secretKey: key(values.key) }
const client = new Client({ seeds: values.seeds.split(','), timeout: Number(values.timeout), security })
const until = Date.now() + 10000
while (client.peers().filter((p) => p.state === 'up' && p.service !== null).length < Number(values.peers)) {
  if (Date.now() > until) { process.stdout.write(JSON.stringify({ error: 'peers not up', peers: client.peers() }) + '\n'); process.exit(1) }
  await new Promise((resolve) => setTimeout(resolve, 20))
}
process.stdout.write('ready\n')
const out = { ok: 0, failed: {}, byEndpoint: {} }
const end = Date.now() + Number(values.seconds) * 1000
const args = JSON.parse(values.args)
await Promise.all(Array.from({ length: Number(values.concurrency) }, async () => {
  while (Date.now() < end) {
    try {
      await client.request(values.method, args, { idempotent: true })
      out.ok++
    } catch (err) {
      out.failed[err.code] = (out.failed[err.code] ?? 0) + 1
    }
  }
}))
for (const p of client.peers()) out.byEndpoint[p.endpoint] = p.state
out.stats = client.stats()
process.stdout.write(JSON.stringify(out) + '\n')
await client.close()
process.exit(0)
