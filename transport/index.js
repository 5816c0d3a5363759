// The transports: how client and peer reach each other. A transport has two factories, as
// Peer's `transport` option takes them (Client's `transport` option is a connector alone):
//   listener(o)  a bound socket:      bind() -> endpoint, send(clientId, frames), close()
//   connector(o) a connecting socket: connect(endpoint), disconnect(endpoint),
//                                     send(endpoint, frames, done(code)), close()
// zmqTransport is the real one; transport/memory.js is its in-memory twin for simulations.
import { ZmqListener } from './zmq-listener.js'
import { ZmqConnector } from './zmq-connector.js'

export const zmqTransport = Object.freeze({
  listener: (o) => new ZmqListener(o),
  connector: (o) => new ZmqConnector(o),
})
