// A bare zeromq.js ROUTER that speaks just enough of zeromesh's wire to answer a Client: each
// REQUEST's entries echoed (their args as the value, status OK), a PING with a PONG, the
// service question (SERVICE_GET) as an older peer answers it ("unknown message type"), a
// member-list request with an empty list. No membership, no dispatch, no handler: what a peer
// costs beyond the codec, taken away (bench/request-path/halves.js). Prints its endpoint.
import * as zmq from 'zeromq'
import * as codec from '../../protocol/codec.js'
import { MessageType, ProtocolErrorCode } from '../../protocol/constants.js'

const META = { mv: 1, load: 0 }
const sock = new zmq.Router({ linger: 0, sendHighWaterMark: 100000, receiveHighWaterMark: 100000 })
await sock.bind('tcp://127.0.0.1:*')
process.stdout.write(sock.lastEndpoint + '\n')
process.on('SIGTERM', () => sock.close())
try {
  for await (const [from, frame] of sock) {
    const m = codec.decode(frame)
    if (m.type === MessageType.REQUEST) await sock.send([from, codec.encodeReply(META, m.requests.map((r) => [r.id, 0, r.args]))])
    else if (m.type === MessageType.PING) await sock.send([from, codec.encodePong(m.seq, META)])
    else if (m.type === MessageType.SERVICE_GET) await sock.send([from, codec.encodeError(ProtocolErrorCode.UNKNOWN_TYPE, `unknown message type ${MessageType.SERVICE_GET}`)])
    else if (m.type === MessageType.MEMBERS_GET) await sock.send([from, codec.encodeMembers(m.seq, 1, [])])
  }
} catch (err) {
  if (!sock.closed) throw err
}
