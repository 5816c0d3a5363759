// Public types of zeromesh. Durations are milliseconds everywhere.
export * from './peer/index.js'
export * from './client/index.js'
export {
  Clock, Member, ErrorCode, ZeromeshError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError,
  BusyError, DrainingError, ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, ProtocolError, HandshakeError, UserCodeError, InvalidInputError, InvalidOutputError,
} from './protocol/index.js'
export { type Contract, type MethodDefinition, type StandardSchemaV1, type InputOf, type OutputOf, type Issue, type DescribedContract, type DescribedMethod } from './runtime/contract.js'
