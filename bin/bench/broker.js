// A central broker for bench comparisons: a zeromq Proxy (ROUTER front, DEALER back) in this
// process and N echo workers in child processes. Prints the front endpoint; SIGTERM stops all.
// Workers hold an IPC channel to the broker and exit when it closes, so they never outlive
// it, even when the broker is SIGKILLed (as bin/bench/harness.js ends its children).
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import * as zmq from 'zeromq'

if (process.argv[2] === 'worker') {
  process.on('disconnect', () => process.exit(0)) // the broker is gone
  const sock = new zmq.Dealer({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  sock.connect(process.argv[3])
  for await (const msg of sock) await sock.send(msg) // [client id, request id, body] straight back
} else {
  const workers = Number(process.argv[2] ?? 2)
  const front = new zmq.Router({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  const back = new zmq.Dealer({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
  await front.bind('tcp://127.0.0.1:*')
  await back.bind('tcp://127.0.0.1:*')
  const kids = Array.from({ length: workers }, () => spawn(process.execPath, [fileURLToPath(import.meta.url), 'worker', back.lastEndpoint], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] }))
  const stop = () => { for (const k of kids) k.kill('SIGKILL'); process.exit(0) }
  process.on('SIGTERM', stop)
  process.on('exit', () => { for (const k of kids) k.kill('SIGKILL') })
  process.stdout.write(front.lastEndpoint + '\n')
  await new zmq.Proxy(front, back).run()
}
