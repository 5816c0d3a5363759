// The zeromesh protocol with nothing around it, as a peer: a bound ROUTER that decodes each
// frame (protocol/codec.js), answers every request in it with its args in one REPLY frame
// (a request for `bytes` with a fresh Buffer of `args.size` bytes, as bench/bytes-handler.js),
// a PING with a PONG, and anything else "unknown type" (as a peer older than the question).
// No duplicates memory, no dispatcher, no budgets, no membership: what bench/ladder.js
// measures zeromesh's peer against. Prints its endpoint on stdout; SIGTERM closes it.
import * as zmq from 'zeromq'
import { decode, encodeReply, encodePong, encodeError } from '../protocol/codec.js'
import { MessageType, ProtocolErrorCode } from '../protocol/constants.js'

const META = { mv: 0, load: 0 }
const sock = new zmq.Router({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
await sock.bind('tcp://127.0.0.1:*')
process.stdout.write(sock.lastEndpoint + '\n')
process.on('SIGTERM', () => sock.close())

/** The answer to one decoded frame. */
function answer (msg) {
  switch (msg.type) {
    case MessageType.REQUEST: return encodeReply(META, msg.requests.map((r) => [r.id, 0, r.method === 'bytes' ? Buffer.alloc(r.args.size, 7) : r.args]))
    case MessageType.PING: return encodePong(msg.seq, META)
    default: return encodeError(ProtocolErrorCode.UNKNOWN_TYPE, `unknown message type ${msg.type}`)
  }
}

try {
  for await (const [id, frame] of sock) {
    let msg
    try { msg = decode(frame) } catch { continue }
    await sock.send([id, answer(msg)])
  }
} catch (err) {
  if (!sock.closed) throw err
}
