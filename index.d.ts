// Public types of zeromesh. Durations are milliseconds everywhere.

import { EventEmitter } from 'node:events'

/** Where time comes from; inject a fake one in tests. */
export interface Clock {
  now(): number
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** What a handler gets besides its args. */
export interface RequestContext {
  /** The method name called. */
  readonly method: string
  /** The client's id for this request. */
  readonly requestId: number
  /** This peer's advertised endpoint. */
  readonly endpoint: string
  /** Milliseconds the client had left when it sent the request; 0 = no deadline. */
  readonly timeoutMs: number
  /** The deadline on this peer's clock (Infinity without one). */
  readonly deadline: number
  /** Milliseconds left before the client gives up. */
  remaining(): number
  /** Aborted when the deadline passes. */
  readonly signal: AbortSignal
}

export type Handler = (args: any, ctx: RequestContext) => unknown
export type Handlers = Record<string, Handler>

export interface PeerOptions {
  /** Endpoint to bind; port 0 picks an ephemeral port. Default 'tcp://127.0.0.1:0'. */
  bind?: string
  /** Endpoint others should use, for a wildcard bind. Default: derived from the bound endpoint. */
  advertise?: string
  /** Peers to join through (array or comma-separated string). */
  seeds?: string[] | string
  /** Methods served on the main thread. */
  handlers?: Handlers
  /** Answers 10/FLP requests: body frames in, reply frames out. Default: echo. */
  flpHandler?: (body: Buffer[]) => Array<Buffer | Uint8Array | string> | Buffer | string | Promise<Array<Buffer | Uint8Array | string> | Buffer | string>
  /** Async handlers running at once before new requests are answered busy. Default 1024. */
  maxInflight?: number
  /** How long stop() waits for in-flight work. Default 10000. */
  drainTimeout?: number
  /** How long queued replies may take to leave once the socket closes (ZMQ_LINGER). Default 500. */
  stopLinger?: number
  /** ZMTP heartbeat interval. Default 1000. */
  heartbeatInterval?: number
  /** ZMTP heartbeat timeout and TTL. Default 3000. */
  heartbeatTimeout?: number
  /** Largest frame accepted or sent, in bytes. Default 1048576. */
  maxMessageSize?: number
  /** Deepest nesting accepted in args. Default 64. */
  maxDepth?: number
  /** Most requests in one frame. Default 1024. */
  maxBatch?: number
  /** Metadata gossiped with this peer's membership (plain data, depth <= 8). `version` is added. */
  meta?: Record<string, unknown>
  /** Membership (SWIM) tuning; see membershipDefaults. */
  membership?: MembershipOptions
  clock?: Clock
  /** Random source in [0, 1). Default Math.random. */
  random?: () => number
}

export interface MembershipOptions {
  /** One member probed per interval. Default 250. */
  probeInterval?: number
  /** Wait for a direct probe's answer. Default 120. */
  probeTimeout?: number
  /** Peers asked to probe when a direct probe fails. Default 3. */
  indirectChecks?: number
  /** Suspicion lasts at least suspicionMult x probeInterval x max(1, log10 N). Default 4. */
  suspicionMult?: number
  /** ...and at most suspicionMaxMult times that. Default 4. */
  suspicionMaxMult?: number
  /** Each change is piggybacked retransmitMult x ceil(log10(N+1)) times. Default 4. */
  retransmitMult?: number
  /** Changes per message at most. Default 16. */
  maxPiggyback?: number
  /** Full state exchange with a random member this often (0: never). Default 5000. */
  pushPullInterval?: number
  /** Wait for a push-pull answer. Default 1000. */
  syncTimeout?: number
  /** First pause before retrying unreachable seeds. Default 100. */
  joinRetryMin?: number
  /** Longest pause between seed retries. Default 5000. */
  joinRetryMax?: number
  /** How long stop() waits for members to acknowledge the leave. Default 300. */
  leaveTimeout?: number
}

/** A member as a peer sees it. */
export interface Member {
  endpoint: string
  state: 'alive' | 'suspect' | 'dead' | 'left'
  incarnation: number
  meta: Record<string, unknown>
}

export interface PeerStats {
  received: number
  malformed: number
  flpPings: number
  flpRequests: number
  protocolErrors: number
  dropped: number
  requests: number
  ok: number
  errors: number
  unknown: number
  busy: number
  drained: number
  invalid: number
  inflight: number
  membership: Record<string, number>
}

export declare class Peer extends EventEmitter {
  constructor(options?: PeerOptions)
  /** Binds; resolves with the endpoint once requests can be served. */
  start(): Promise<string>
  /** The advertised endpoint, once started. */
  readonly endpoint: string | null
  readonly state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped'
  stats(): PeerStats
  /** This peer's view of the cluster, itself included. */
  members(): Member[]
  /** Graceful: announces its leave, refuses new work (draining), finishes in-flight work, closes. */
  stop(): Promise<void>
  on(event: 'member', listener: (member: Member) => void): this
  on(event: string | symbol, listener: (...args: any[]) => void): this
}

export declare const membershipDefaults: Readonly<Required<MembershipOptions>>

export declare const peerDefaults: Readonly<Required<Pick<PeerOptions,
  'bind' | 'maxInflight' | 'drainTimeout' | 'stopLinger' | 'heartbeatInterval' | 'heartbeatTimeout' | 'maxMessageSize' | 'maxDepth' | 'maxBatch'>>>

/** A peer as a strategy sees it. */
export interface StrategyPeer {
  readonly endpoint: string
  /** Position in the order the client learned peers. */
  readonly order: number
  readonly state: 'up'
  readonly latencyMs: number | null
  readonly failures: number
  readonly calls: { readonly size: number }
}

export interface Strategy {
  /** Picks one of `peers` (never empty, all up, not yet tried by this request). */
  select(peers: readonly StrategyPeer[], request: { readonly method: string, readonly id: number }): StrategyPeer
}

export interface ClientTransportHandlers {
  maxMessageSize: number
  heartbeatInterval: number
  heartbeatTimeout: number
  onMessage(endpoint: string, frames: Buffer[]): void
  onUp(endpoint: string): void
  onDown(endpoint: string): void
}

export interface ClientTransport {
  connect(endpoint: string): void
  disconnect(endpoint: string): void
  send(endpoint: string, frames: Buffer[], done: (code: string | null) => void): void
  close(): Promise<void>
}

export interface ClientOptions {
  /** Peers to start from (array or comma-separated string). Required. */
  seeds: string[] | string
  /** Whole deadline of a request, retries included. Default 5000. */
  timeout?: number
  /** Whether requests may be re-sent after a lost connection. Default true. */
  idempotent?: boolean
  /** 'round-robin' (default), 'random', or an object with select(). */
  strategy?: 'round-robin' | 'random' | Strategy
  /** ZMTP heartbeat interval. Default 1000. */
  heartbeatInterval?: number
  /** ZMTP heartbeat timeout and TTL. Default 3000. */
  heartbeatTimeout?: number
  /** Largest request sent, in bytes. Default 1048576. */
  maxMessageSize?: number
  /** Deepest nesting accepted in results. Default 64. */
  maxDepth?: number
  /** Learn peers from the member lists of the peers it talks to. Default true. */
  discover?: boolean
  /** Also fetch a member list from a random up peer this often (0: never). Default 5000. */
  refreshInterval?: number
  /** Wait for a member list. Default 1000. */
  membersTimeout?: number
  clock?: Clock
  /** Random source in [0, 1). Default Math.random. */
  random?: () => number
  /** Builds the transport; for tests and simulations. Default: ZeroMQ. */
  transport?: (handlers: ClientTransportHandlers) => ClientTransport
}

export interface RequestOptions {
  /** Whole deadline, retries included. Default: the client's timeout. */
  timeout?: number
  /** May this request be re-sent after a lost connection? Default: the client's idempotent. */
  idempotent?: boolean
  signal?: AbortSignal
}

export interface PeerInfo {
  /** Set on the event that reports a peer dropped because it left the cluster or died. */
  removed?: boolean
  endpoint: string
  state: 'up' | 'down' | 'draining'
  inflight: number
  latencyMs: number | null
  failures: number
  lastError: string | null
}

export interface ClientStats {
  requests: number
  ok: number
  retries: number
  malformed: number
  failed: Record<string, number>
  inflight: number
  memberLists: number
}

export declare class Client extends EventEmitter {
  constructor(options: ClientOptions)
  request<T = unknown>(method: string, args?: unknown, options?: RequestOptions): Promise<T>
  peers(): PeerInfo[]
  stats(): ClientStats
  /** A peer's view of the cluster (`from`, or a random up peer). */
  members(from?: string): Promise<Member[]>
  close(): Promise<void>
  on(event: 'peer', listener: (peer: PeerInfo) => void): this
  on(event: string | symbol, listener: (...args: any[]) => void): this
}

export declare const clientDefaults: Readonly<{
  timeout: number
  idempotent: boolean
  strategy: string
  heartbeatInterval: number
  heartbeatTimeout: number
  maxMessageSize: number
  maxDepth: number
  discover: boolean
  refreshInterval: number
  membersTimeout: number
}>
export declare const strategyNames: readonly string[]

export type ErrorCode =
  | 'ERR_ZEROMESH_TIMEOUT' | 'ERR_ZEROMESH_NO_PEERS' | 'ERR_ZEROMESH_UNKNOWN_METHOD'
  | 'ERR_ZEROMESH_REMOTE' | 'ERR_ZEROMESH_BUSY' | 'ERR_ZEROMESH_DRAINING' | 'ERR_ZEROMESH_CLOSED'
  | 'ERR_ZEROMESH_INVALID_ARGUMENT' | 'ERR_ZEROMESH_CONNECTION_LOST' | 'ERR_ZEROMESH_ABORTED'
  | 'ERR_ZEROMESH_PROTOCOL'

export declare class ZeromeshError extends Error {
  constructor(message?: string, options?: { code?: string, retryable?: boolean, cause?: unknown })
  /** Stable: match on this, not on the message. */
  readonly code: ErrorCode | string
  /** Whether trying again (elsewhere) makes sense. */
  readonly retryable: boolean
}
export declare class TimeoutError extends ZeromeshError {}
export declare class NoPeersError extends ZeromeshError {}
export declare class UnknownMethodError extends ZeromeshError {}
export declare class RemoteError extends ZeromeshError {
  constructor(message?: string, options?: { remoteCode?: string | null, cause?: unknown })
  /** The remote error's own `code`, or null. */
  readonly remoteCode: string | null
}
export declare class BusyError extends ZeromeshError {}
export declare class DrainingError extends ZeromeshError {}
export declare class ClosedError extends ZeromeshError {}
export declare class InvalidArgumentError extends ZeromeshError {}
export declare class ConnectionLostError extends ZeromeshError {}
export declare class AbortError extends ZeromeshError {}
export declare class ProtocolError extends ZeromeshError {
  /** Set when the sender should be told with an ERROR frame. */
  protocolCode?: number
}
