// The usual way, for bench/cpu.js: node:http behind the cluster module, one worker process
// per core, each request running the same `spin` loop. Prints the port once all listen.
import cluster from 'node:cluster'
import http from 'node:http'
import { spin } from '../demo/handlers.js'

const workers = Number(process.argv[2] ?? 2)
const n = Number(process.argv[3] ?? 5000000)

if (cluster.isPrimary) {
  let listening = 0
  for (let i = 0; i < workers; i++) cluster.fork()
  cluster.on('listening', (w, address) => {
    if (++listening === workers) process.stdout.write(`${address.port}\n`)
  })
  process.on('SIGTERM', () => { for (const w of Object.values(cluster.workers)) w.kill(); process.exit(0) })
} else {
  http.createServer((req, res) => {
    const out = JSON.stringify(spin({ n }))
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(out)
  }).listen(0, '127.0.0.1')
}
