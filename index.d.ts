// Public types of zeromesh. Durations are milliseconds everywhere.
export * from './peer/index.js'
export * from './client/index.js'
export {
  Clock, Member, ErrorCode, ZeromeshError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError,
  BusyError, DrainingError, ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, ProtocolError, HandshakeError, UserCodeError,
} from './protocol/index.js'
