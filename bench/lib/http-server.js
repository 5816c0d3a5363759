// The API of examples/express (a cheap route and a CPU-heavy one, countPrimes) served the ways
// the Node scaling tutorials compare, for bench/work/http-api.js:
//   node bench/lib/http-server.js single             one process; the heavy route runs inline
//   node bench/lib/http-server.js cluster N          node:cluster, N worker processes, inline
//   node bench/lib/http-server.js zeromesh SEEDS     one Express process; the heavy route runs on
//                                                zeromesh peers (SEEDS: endpoints, comma-separated)
// Prints the port once it listens; SIGTERM stops it.
import { serveClustered } from './cluster-serve.js'
import { createApp, start } from '../../examples/express/app.js'
import handlers from '../../examples/express/handlers.js'

const [mode, arg] = process.argv.slice(2)
const inline = (input) => handlers['primes.count'](input) // the peer's handler, its input checked by the contract, run in this process

function listenInline () {
  const server = createApp(inline).listen(0, '127.0.0.1')
  return server
}

if (mode === 'single') {
  const server = listenInline()
  server.on('listening', () => process.stdout.write(`${server.address().port}\n`))
  process.on('SIGTERM', () => process.exit(0))
} else if (mode === 'cluster') {
  serveClustered(Number(arg ?? 2), () => listenInline())
} else if (mode === 'zeromesh') {
  const api = await start({ seeds: arg.split(','), port: 0, timeout: 30000 })
  process.stdout.write(`${api.port}\n`)
  process.on('SIGTERM', () => { api.close().then(() => process.exit(0)) })
} else {
  console.error('usage: node bench/lib/http-server.js single | cluster N | zeromesh SEEDS')
  process.exit(2)
}
