// Baseline server for the benchmarks: a bare zeromq.js ROUTER that echoes every message,
// one send per message. Prints its endpoint on stdout; SIGTERM closes it. With the argument
// `msgpack`, each message is one frame of [id 4][length 4][body] entries (harness.js
// rawClientNonBlocking), and every body is decoded and encoded again with msgpackr
// (zeromesh's codec settings) before the frame goes back: the MessagePack work a zeromesh
// peer does, and nothing else. With `bytes`, each message is a JSON ask `{"size":N}`, answered
// with a fresh Buffer of N bytes in one frame. argv[3], if given:
// megabytes of application state kept alive (harness keepState).
import * as zmq from 'zeromq'
import { packValue, unpackValue } from '../../protocol/frames.js'
import { keepState } from './harness.js'

const MSGPACK = process.argv[2] === 'msgpack'
const BYTES = process.argv[2] === 'bytes'
keepState(Number(process.argv[3] ?? 0))

/** The frame with every body decoded and encoded again. */
function reencode (frame) {
  const parts = []
  let size = 0
  for (let at = 0; at + 8 <= frame.length;) {
    const length = frame.readUInt32LE(at + 4)
    const body = Buffer.from(packValue(unpackValue(frame.subarray(at + 8, at + 8 + length))))
    parts.push(frame.readUInt32LE(at), body)
    size += 8 + body.length
    at += 8 + length
  }
  const out = Buffer.allocUnsafe(size)
  let at = 0
  for (let i = 0; i < parts.length; i += 2) {
    out.writeUInt32LE(parts[i], at)
    out.writeUInt32LE(parts[i + 1].length, at + 4)
    parts[i + 1].copy(out, at + 8)
    at += 8 + parts[i + 1].length
  }
  return out
}

const sock = new zmq.Router({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
await sock.bind('tcp://127.0.0.1:*')
process.stdout.write(sock.lastEndpoint + '\n')
process.on('SIGTERM', () => sock.close())
try {
  for await (const msg of sock) {
    if (BYTES) await sock.send([msg[0], Buffer.alloc(JSON.parse(msg[1].toString()).size, 7)])
    else await sock.send(MSGPACK ? [msg[0], reencode(msg[1])] : msg)
  }
} catch (err) {
  if (!sock.closed) throw err
}
