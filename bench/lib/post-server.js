// The blog post's app (issue 68): a plain node:http server whose GET / counts down from 1e7
// (bench/lib/countdown-handlers.js, about 5 ms of CPU) and whose GET /cheap answers at once,
// served the ways bench/work/blog-post.js compares:
//   node bench/lib/post-server.js cluster N        node:cluster, N workers, the count inline
//   node bench/lib/post-server.js zeromesh SEEDS   one process; the count runs on zeromesh peers
//   node bench/lib/post-server.js gateway SEEDS    the same front written with zeromesh/http's
//                                                  gateway (GET / mapped to countdown)
//   node bench/lib/post-server.js timer MS         one process; GET / answered after a timer of
//                                                  MS, no work anywhere: the front's HTTP alone
// Prints the port once it listens; SIGTERM stops it.
import { serveClustered } from './cluster-serve.js'
import http from 'node:http'
import { countdown } from './countdown-handlers.js'

const [mode, arg] = process.argv.slice(2)

/** The app: `heavy()` gives GET /'s answer (a value or a Promise of one). */
function listen (heavy) {
  const server = http.createServer((req, res) => {
    if (req.url === '/cheap') return res.end('ok')
    if (req.url !== '/') { res.statusCode = 404; return res.end() }
    const answer = heavy()
    if (typeof answer === 'string') return res.end(answer)
    answer.then((v) => res.end(v), (err) => { res.statusCode = 503; res.end(String(err.code ?? err.message)) })
  })
  return server.listen(0, '127.0.0.1')
}

if (mode === 'cluster') {
  serveClustered(Number(arg ?? 2), () => listen(countdown))
} else if (mode === 'zeromesh') {
  const { Client } = await import('zeromesh')
  const client = new Client({ seeds: arg.split(','), timeout: 30000 })
  const server = listen(() => client.request('countdown', null))
  server.on('listening', () => process.stdout.write(`${server.address().port}\n`))
  process.on('SIGTERM', () => { server.close(); client.close().then(() => process.exit(0)) })
} else if (mode === 'gateway') {
  // The front in a few lines (docs/guides/http-api.md): the gateway routes GET / to countdown, the rest to its next.
  const { Client } = await import('zeromesh')
  const { gateway } = await import('zeromesh/http')
  const client = new Client({ seeds: arg.split(','), timeout: 30000 })
  const front = gateway(client, { routes: { 'GET /': 'countdown' } })
  const server = http.createServer((req, res) => front(req, res, () => { if (req.url !== '/cheap') res.statusCode = 404; res.end('ok') }))
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`))
  process.on('SIGTERM', () => { server.close(); client.close().then(() => process.exit(0)) })
} else if (mode === 'timer') {
  const ms = Number(arg ?? 300)
  const server = listen(() => new Promise((resolve) => setTimeout(() => resolve('done'), ms)))
  server.on('listening', () => process.stdout.write(`${server.address().port}\n`))
  process.on('SIGTERM', () => { server.close(); process.exit(0) })
} else {
  console.error('usage: node bench/lib/post-server.js cluster N | zeromesh SEEDS | gateway SEEDS | timer MS')
  process.exit(2)
}
