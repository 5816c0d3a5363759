// zeromesh: ZeroMQ peer-to-peer, client-side load balancing.
export { Peer, peerDefaults, membershipDefaults, implement, contract, on } from './peer/index.js'
export { Client, clientDefaults, strategyNames } from './client/index.js'
export {
  ZeromeshError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError,
  DrainingError, ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, ProtocolError,
  HandshakeError, UserCodeError, InvalidInputError, InvalidOutputError, NoSubscribersError,
} from './protocol/errors.js'
