// The raw zeromq.js baseline of bench/work/threads.js: a process with a bare ROUTER that runs
// the demo's spin(n) for each request, one at a time on its only thread, and answers with the
// request's id. N of them behind one DEALER are what a hand-written zeromq.js fleet of N
// workers gets from this machine for CPU-bound work. Prints its endpoint; SIGTERM or SIGKILL ends it.
import * as zmq from 'zeromq'
import { spin } from '../../demo/handlers.js'

const sock = new zmq.Router({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
await sock.bind('tcp://127.0.0.1:*')
process.stdout.write(`${sock.lastEndpoint}\n`)
process.on('SIGTERM', () => { sock.close(); process.exit(0) })
for await (const [routing, id, body] of sock) {
  const { n } = JSON.parse(body)
  const { x } = spin({ n })
  await sock.send([routing, id, String(x)])
}
