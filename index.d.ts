// Public types of zeromesh, every name listed. Durations are milliseconds everywhere.
export { Peer, peerDefaults, membershipDefaults, implement } from './peer/index.js'
export type {
  RequestContext, Handler, Handlers, PeerMiddlewareContext, PeerMiddleware, ContractHandlers, PeerOptions, PeerSecurity,
  Refusal, MembershipOptions, PeerStats, Member, EventHandler, PeerEvents,
} from './peer/index.js'
export { Client, clientDefaults, strategyNames } from './client/index.js'
export type {
  StrategyPeer, Strategy, ClientTransportHandlers, ClientTransport, ClientOptions, ClientSecurity, RequestOptions,
  StreamOptions, CallContext, ClientMiddleware, ContractProxy, ServiceClient, ClientStream, PeerInfo, ClientStats,
  PublishOptions, BroadcastOptions, Delivery, PublishResult, BroadcastResult, GatherResult, ContractEvents,
} from './client/index.js'
export type { Clock, Logger, DnsOptions, Transport, Listener, Connector } from './runtime/types.js'
export {
  ErrorCode, ZeromeshError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError, DrainingError,
  ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, ProtocolError, HandshakeError, UserCodeError,
  InvalidInputError, InvalidOutputError, NoSubscribersError,
} from './protocol/index.js'
export { contract, on } from './runtime/contract.js'
export type { Contract, MethodDefinition, StandardSchemaV1, InputOf, OutputOf, Issue, DescribedContract, DescribedMethod, DescribedEvent, Subscription } from './runtime/contract.js'
