// What middleware costs on the request path: two `zeromesh peer --threads 0` serving the demo's
// `echo`, one plain and one with a no-op middleware (bench/lib/middleware-noop.js, a handler
// module whose `middleware` export the peer loads), and
// clients with and without a no-op middleware of their own; four ways measured in turn, round
// after round (rotated), medians and the per-round ratio to none:
//   none     a plain client to the plain peer
//   peer     a plain client to the peer with the middleware
//   client   a client with the middleware to the plain peer
//   both     a client with the middleware to the peer with it
//   node bench/request-path/middleware.js --rounds 5 --seconds 2 --concurrency 1,256
import { fileURLToPath } from 'node:url'
import { child, compareWays, waysOptions, killChildren, PAYLOAD } from '../../bin/bench/harness.js'
import { Client } from '../../index.js'

const { seconds, rounds, levels } = waysOptions()
const bin = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const echo = fileURLToPath(new URL('../../demo/handlers.js', import.meta.url))
const noop = fileURLToPath(new URL('../lib/middleware-noop.js', import.meta.url))

const plain = (await child([bin, 'peer', '--handlers', echo, '--threads', '0', '--log-level', 'silent'])).line
const withMw = (await child([bin, 'peer', '--handlers', `${echo},${noop}`, '--threads', '0', '--log-level', 'silent'])).line
const clients = []
const client = (seed, mw) => { const c = new Client({ seeds: [seed], timeout: 30000 }); if (mw) c.use((ctx, next) => next()); clients.push(c); return c }
const pairs = { none: client(plain, false), peer: client(withMw, false), client: client(plain, true), both: client(withMw, true) }
const ways = Object.fromEntries(Object.entries(pairs).map(([name, c]) => [name, () => c.request('echo', PAYLOAD)]))
try {
  for (const one of Object.values(ways)) await one()
  await compareWays(ways, { levels, rounds, seconds })
} finally {
  for (const c of clients) await c.close()
  killChildren()
}
