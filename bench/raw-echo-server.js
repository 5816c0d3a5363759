// Baseline server for bench/echo.js: a bare zeromq.js ROUTER that echoes every message,
// one send per message. Prints its endpoint on stdout; SIGTERM closes it.
import * as zmq from 'zeromq'

const sock = new zmq.Router({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
await sock.bind('tcp://127.0.0.1:*')
process.stdout.write(sock.lastEndpoint + '\n')
process.on('SIGTERM', () => sock.close())
try {
  for await (const msg of sock) await sock.send(msg)
} catch (err) {
  if (!sock.closed) throw err
}
