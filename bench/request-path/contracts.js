// What a contract's checks cost on the request path: one `zeromesh peer --threads 0` serving
// `echo` plain and `bench.echo` through a contract (bench/lib/contract-handlers.js: a zod object
// of the ~40-byte payload), one client, three ways measured in turn, round after round:
//   plain      client.request('echo', payload): no contract
//   peer       client.request('bench.echo', payload): checked at the peer only
//   both       client.proxy(bench).echo(payload): checked in the client, then at the peer
// Medians of the rounds, and the per-round ratio to plain.
//   node bench/request-path/contracts.js --rounds 5 --seconds 2 --concurrency 1,256
import { fileURLToPath } from 'node:url'
import { child, compareWays, waysOptions, killChildren, PAYLOAD } from '../../bin/bench/harness.js'
import { Client } from '../../index.js'
import { bench } from '../lib/contract-handlers.js'

const { seconds, rounds, levels } = waysOptions()
const bin = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const handlers = fileURLToPath(new URL('../lib/contract-handlers.js', import.meta.url))

const { line } = await child([bin, 'peer', '--handlers', handlers, '--threads', '0', '--log-level', 'silent'])
const client = new Client({ seeds: [line], timeout: 30000 })
const svc = client.proxy(bench)
const ways = {
  plain: () => client.request('echo', PAYLOAD),
  peer: () => client.request('bench.echo', PAYLOAD),
  both: () => svc.echo(PAYLOAD),
}
try {
  for (const one of Object.values(ways)) await one()
  await compareWays(ways, { levels, rounds, seconds })
} finally {
  await client.close()
  killChildren()
}
