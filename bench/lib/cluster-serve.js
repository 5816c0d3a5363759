// node:cluster as the benches run it (bench/lib/http-server.js, bench/lib/post-server.js): the
// primary forks `workers` workers, prints the port once every one listens, and kills them on
// SIGTERM; each worker calls `listen()` (the app's server, inline).
import cluster from 'node:cluster'

export function serveClustered (workers, listen) {
  if (!cluster.isPrimary) return listen()
  let listening = 0
  for (let i = 0; i < workers; i++) cluster.fork()
  cluster.on('listening', (w, address) => {
    if (++listening === workers) process.stdout.write(`${address.port}\n`)
  })
  process.on('SIGTERM', () => { for (const w of Object.values(cluster.workers)) w.kill(); process.exit(0) })
}
