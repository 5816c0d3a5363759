// Types of zeromesh/client.
/// <reference types="node" />
import { EventEmitter } from 'node:events'
import type { Member } from '../protocol/index.js'
import type { Clock, Logger, DnsOptions, Transport, DurableHook } from '../runtime/types.js'

/** A peer as a strategy sees it. */
export interface StrategyPeer {
  readonly endpoint: string
  /** Position in the order the client learned peers. */
  readonly order: number
  readonly state: 'up'
  readonly latencyMs: number | null
  readonly failures: number
  readonly calls: { readonly size: number }
  /** Requests in flight on the peer, all clients together, as it last reported. */
  readonly load: number
}

export interface Strategy {
  /** Picks one of `peers` (never empty, all up, not yet tried by this request). */
  select(peers: readonly StrategyPeer[], request: { readonly method: string, readonly id: number }): StrategyPeer
  /** Called when an attempt on `peer` ends with an answer or times out. */
  onResult?(peer: StrategyPeer, result: { latencyMs: number, error: unknown, at: number }): void
}

export interface ClientTransportHandlers {
  maxMessageSize: number
  heartbeatInterval: number
  heartbeatTimeout: number
  onMessage(endpoint: string, frames: Buffer[]): void
  onUp(endpoint: string): void
  onDown(endpoint: string): void
  /** CURVE keys when security is set, else null. */
  credentials: { serverKey: string, publicKey: string, secretKey: string } | null
  /** A handshake failed: 'auth' (the peer's allow-list), 'protocol' (mechanism or key mismatch), 'other' (hung up). */
  onRefused(endpoint: string, refusal: { kind: 'auth' | 'protocol' | 'other', code: string | null }): void
}

export interface ClientTransport {
  /** Returns false when the endpoint is refused (the peer is then not added). */
  connect(endpoint: string): boolean | void
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
  /** 'p2c' (default), 'round-robin', 'random', or an object with select(). */
  strategy?: 'p2c' | 'round-robin' | 'random' | Strategy
  /** One attempt of an idempotent request may take this long before another peer is tried. Default 'auto'. */
  attemptTimeout?: 'auto' | number
  /** Attempts per request at most, the first included. Default 3. */
  maxAttempts?: number
  /**
   * Calls (requests and streams) in this client at once, in flight or waiting for a peer's
   * capacity; beyond, request() rejects (stream() throws) at once with ERR_ZEROMESH_BUSY.
   * Default 65536.
   */
  maxPending?: number
  /** The same cap in bytes: the encoded size of those calls. Default 64 MiB. */
  maxPendingBytes?: number
  /** Retries <= percent x requests + minPerSecond per second, over windowMs. */
  retryBudget?: { percent?: number, minPerSecond?: number, windowMs?: number }
  /** Send a second copy of a slow idempotent request to another peer after delayMs. Default null. */
  hedge?: { delayMs: number } | null
  /** Outlier ejection. */
  ejection?: { after?: number, baseMs?: number, maxMs?: number, maxShare?: number }
  /** A peer connection silent this long gets a PING (a protocol message, not a ZMTP ping); 0: none. Default 1000. */
  heartbeatInterval?: number
  /** A peer from which nothing came this long is down, and its connection made anew. Default 3000. */
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
  /** Members known at most; a member list naming more is not taken beyond this. Default 4096. */
  maxPeers?: number
  /** Peers connected at most, for all methods together, once the cluster has more members (0: all). Default 32. */
  subset?: number
  /** With subsets: how often (ms, jittered 0.5-1.5x) the client asks its peers how many clients each holds and moves one connection off a peer that stands out. 0: never. Default: 10000. */
  rebalanceInterval?: number
  /** Labels every request's peer must have, unless a request says otherwise. Default: none. */
  where?: Record<string, string> | null
  /** This client's zone: requests stay with peers labelled zone=<it> while they have capacity, the excess spills. Default: none. */
  zone?: string | null
  /** What a stream's peer may send ahead of the reader, in items and bytes. Default { items: 64, bytes: 4194304 }. */
  streamWindow?: { items?: number, bytes?: number }
  clock?: Clock
  /** ms since 1970, for the incarnation horizon of member-list claims. Default Date.now. */
  wallClock?: () => number
  /** Random source in [0, 1). Default Math.random. */
  random?: () => number
  /**
   * The sockets, in the shape Peer's `transport` takes ({ connector } at least): a
   * zeromesh/testing MemoryNetwork host's `transport` fits as it is. Default: ZeroMQ. The
   * connector function alone is deprecated (a DeprecationWarning), and goes in a later release.
   */
  transport?: { connector(handlers: ClientTransportHandlers): ClientTransport } | Transport | ((handlers: ClientTransportHandlers) => ClientTransport)
  /**
   * CURVE (docs/guides/security.md). Left out: plain, and only loopback, ipc and inproc seeds are
   * accepted. `false`: plain anywhere, on purpose.
   */
  security?: ClientSecurity | false
  /** A pino logger: refused handshakes (warn), peer state changes (debug). Default: silent. */
  logger?: Logger
  /** For DNS seeds: servers, re-resolve interval, query timeout. */
  dns?: DnsOptions
  /** Durable events (zeromesh/jetstream's durableEvents()): publish() of one of its events stores it in JetStream, never sends it on the mesh. */
  durable?: DurableHook | null
}

export interface ClientSecurity {
  /** The cluster's public key (Z85; the cluster's PREFIX.pub). */
  clusterPublicKey: string
  /** This client's secret key (Z85; its PREFIX.key); its public key must be on the peers' allow-list. */
  secretKey: string
  /** Derived from secretKey; checked against it when given. */
  publicKey?: string
}

export interface RequestOptions {
  /** Whole deadline, retries included. Default: the client's timeout. */
  timeout?: number
  /** May this request be re-sent after a lost connection or an attempt timeout? Default: the client's idempotent. */
  idempotent?: boolean
  /** Default: the client's attemptTimeout. */
  attemptTimeout?: 'auto' | number
  /** Default: the client's hedge. */
  hedge?: { delayMs: number } | null
  /** Routes by rendezvous hashing: the same key goes to the same peer while it lives. */
  key?: string
  /** A semver range the peer's service version must satisfy ('^2', '~2.1', '>=1.2 <3'). */
  version?: string
  /** Labels the peer must have; null: any (overrides the client's `where`). */
  where?: Record<string, string> | null
  signal?: AbortSignal
  /** Request headers for the peer's middleware and handlers (ctx.headers): lowercase names, string values; at most 32, 8192 characters in all (PROTOCOL.md 4.1). */
  headers?: Record<string, string>
  /** Resolve with every result the handler answered, in order (an array: a NestJS handler's Observable values, PROTOCOL.md 4.2.3); a one-result handler gives [result]. Default false: the last result. */
  values?: boolean
  /** The one peer this call may go to (dialled if the client does not know it); default: any peer the balancer picks. */
  endpoint?: string
}

export interface StreamOptions {
  /** Whole deadline of the stream; 0 (the default): none, for feeds. */
  timeout?: number
  /** The longest wait for the first item and between items while the reader waits for one; 0: none. Default: the client's timeout. */
  idleTimeout?: number
  /** What the peer may send ahead of the reader. Default: the client's streamWindow. */
  window?: { items?: number, bytes?: number }
  /** Items for the handler to read from ctx.input (a request stream): an array, a generator, a Readable. Sent within the peer's credit. */
  input?: Iterable<unknown> | AsyncIterable<unknown>
  /** Before its first item, may the stream move to another peer after a lost connection? Default: the client's idempotent. */
  idempotent?: boolean
  /** Routes by rendezvous hashing. */
  key?: string
  /** A semver range the peer's service version must satisfy. */
  version?: string
  /** Labels the peer must have; null: any. */
  where?: Record<string, string> | null
  /** Aborting ends the stream (ERR_ZEROMESH_ABORTED) and the handler on the peer. */
  signal?: AbortSignal
  /** Request headers, as for a request. */
  headers?: Record<string, string>
  /** The one peer this stream may go to, as for a request. */
  endpoint?: string
}

/** client.publish()'s options: a request's, without hedge (an event is never hedged). */
export interface PublishOptions extends Omit<RequestOptions, 'hedge' | 'values' | 'endpoint'> {
  /** Wait for each group's handler to finish (true, the default), or resolve once each delivery left (false: at most once). */
  ack?: boolean
  /** The groups that must each get the event, whether they subscribe yet or not; default: every group subscribing now (or the first to come). */
  groups?: string[]
}
/** client.broadcast()'s options: a request's, without hedge and key. */
export interface BroadcastOptions extends Omit<RequestOptions, 'hedge' | 'key' | 'values' | 'endpoint'> {
  /** Wait for each peer's handlers to finish (true, the default), or count a delivery once it left (false). */
  ack?: boolean
}
/** One group's delivery of a published event: the group, and the peer that took it. */
export interface Delivery {
  group: string
  endpoint: string
  /** How many of the peer's threads ran it, when its subscription runs in every thread (eachThread). */
  threads?: number
}
/** What publish() resolves with: `delivered`, or `sent` when it asked for no ack. A failed group rejects it with that group's error, which carries `delivered` and `failed` ({ group, endpoint, error }). */
export type PublishResult = { delivered: Delivery[] } | { sent: Delivery[] }
/** What broadcast() resolves with: each subscribing peer's outcome. */
export interface BroadcastResult {
  /** `threads`: how many of the peer's threads ran it, when a subscription that runs in every thread (eachThread) did. */
  delivered: Array<{ endpoint: string, threads?: number }>
  /** Its handler threw (RemoteError), or it refused the event. */
  failed: Array<{ endpoint: string, error: Error }>
  /** No ack before the deadline (frozen, partitioned, down), or dead or left by the member lists. */
  unreached: Array<{ endpoint: string, reason: string }>
}

/**
 * What a client middleware sees of one call (docs/guides/middleware.md). Before next(): what
 * will be sent, which it may change. After next(), for a request: the peer that answered and
 * the attempts it took (a stream's and an event's stay null and 0). For an event
 * (kind 'publish' or 'broadcast'), `method` is its name and `args` its payload.
 */
export interface CallContext {
  readonly kind: 'request' | 'stream' | 'publish' | 'broadcast'
  method: string
  args: unknown
  headers: Record<string, string>
  /** The call's timeout; undefined: the client's default. */
  timeout: number | undefined
  signal: AbortSignal | undefined
  /** The other options as given (idempotent, key, version, where, hedge; a stream's window, input, idleTimeout). */
  options: Record<string, unknown>
  /** The endpoint of the peer whose answer settled the request, or null. */
  peer: string | null
  attempts: number
}
/** `async (ctx, next) => ...`: once per call, around it (retries and hedges happen inside next()). next() resolves with the result (for a stream: the stream) and the middleware returns it, or what it wants in its place. */
export type ClientMiddleware = (ctx: CallContext, next: () => Promise<unknown>) => unknown

/** client.proxy(contract): each method takes its input schema's input and gives its output schema's output. */
export type ContractProxy<C extends import('../runtime/contract.js').Contract> = {
  readonly [K in keyof C['methods']]: C['methods'][K] extends { stream: true }
    ? (input: import('../runtime/contract.js').InputOf<C['methods'][K]['input']>, options?: StreamOptions) => AsyncIterableIterator<import('../runtime/contract.js').OutputOf<C['methods'][K]['output']>>
    : (input: import('../runtime/contract.js').InputOf<C['methods'][K]['input']>, options?: RequestOptions) => Promise<import('../runtime/contract.js').OutputOf<C['methods'][K]['output']>>
} & ({} extends C['events'] ? {} : { readonly events: ContractEvents<C> })
/** client.proxy(contract).events: each event of the contract, published or broadcast with its payload checked first. */
export type ContractEvents<C extends import('../runtime/contract.js').Contract> = {
  readonly [E in keyof C['events']]: {
    publish(payload: import('../runtime/contract.js').InputOf<C['events'][E]['schema']>, options?: PublishOptions & { ack?: true }): Promise<{ delivered: Delivery[] }>
    publish(payload: import('../runtime/contract.js').InputOf<C['events'][E]['schema']>, options: PublishOptions & { ack: false }): Promise<{ sent: Delivery[] }>
    broadcast(payload: import('../runtime/contract.js').InputOf<C['events'][E]['schema']>, options?: BroadcastOptions): Promise<BroadcastResult>
  }
}
/** @deprecated since 0.3.0: ContractProxy. */
export type ServiceClient<C extends import('../runtime/contract.js').Contract> = ContractProxy<C>

/**
 * A stream's items, for `for await` or `Readable.from`. Breaking out of the loop ends the
 * handler on the peer. Errors come out of the iteration after the items before them, each
 * with `items`: how many items arrived (resume with a cursor in the args).
 */
export interface ClientStream<T = unknown> extends AsyncIterableIterator<T> {
  /** Items that arrived so far. */
  readonly received: number
}

export interface PeerInfo {
  /** Set on the event that reports a peer dropped because it left the cluster or died. */
  removed?: boolean
  endpoint: string
  state: 'up' | 'down' | 'draining' | 'ejected'
  inflight: number
  latencyMs: number | null
  failures: number
  lastError: string | null
  /** What it serves by its own word; 'any' for a peer older than services; null until it said. */
  service: import('../protocol/index.js').ServiceDescriptor | 'any' | null
}

export interface ClientStats {
  requests: number
  ok: number
  retries: number
  hedges: number
  attemptTimeouts: number
  budgetExhausted: number
  ejections: number
  malformed: number
  /** Peers a member list named that were not taken: over maxPeers, or refused by ZeroMQ. */
  peersRefused: number
  /** Peers dialled at once because the lists showed them alive again (a new incarnation) while their connection was down. */
  redials: number
  /** Endpoints off loopback a plain client was given (member lists, DNS) and never dialled. */
  offLoopback: number
  /** Member-list claims refused: an incarnation more than 24 h ahead of the wall clock. */
  beyondHorizon: number
  /** Peers a list showed dead or left that answered the client themselves, and stayed in rotation. */
  verified: number
  /** Key proofs sent (a secured client, on each new connection). */
  proofs: number
  /** Connections moved from a crowded peer to another, to even out the peers' clients (rebalanceInterval). */
  moves: number
  failed: Record<string, number>
  /** Streams opened, ended well, and failed (their failures are in `failed` by code too). */
  streams: { opened: number, ok: number, failed: number }
  /** Event deliveries (one per group a publish reaches, one per peer a broadcast reaches), acknowledged, failed, and sent again after a lost connection or an attempt timeout. */
  events: { deliveries: number, ok: number, failed: number, redelivered: number }
  /** Calls (requests and streams) in this client now: in flight, or waiting for a peer or for capacity. */
  inflight: number
  /** Requests and streams waiting now for a place on a busy peer (every peer that may take them answered BUSY). */
  waiting: number
  /** Requests and streams that have waited for capacity, since the client started. */
  waited: number
  /** Waiting calls sent to a busy peer as a probe for a place (it freed none of ours for a while, or it may have gained places); each one it refuses is one more BUSY answer there. */
  probes: number
  /** Member lists taken in. */
  memberLists: number
  /** Member lists asked for (MEMBERS_GET sent). */
  memberFetches: number
}

/** What gather() resolves with: each serving peer's outcome, sorted by endpoint. */
export interface GatherResult<T = unknown> {
  replies: Array<{ endpoint: string, value: T }>
  /** Its handler threw (RemoteError), or it refused the request (invalid input, unknown method). */
  failed: Array<{ endpoint: string, error: Error }>
  /** No answer before the deadline, the connection lost, or busy or draining to the end. */
  unreached: Array<{ endpoint: string, reason: string }>
}

/** A deadline on a client's clock (client.deadline()). */
export interface Deadline {
  /** Its length in ms. */
  readonly timeout: number
  /** When it passes, on the client's clock. */
  readonly at: number
  /** Whole ms left, at least 1: what to give the next call as its timeout. */
  left(): number
  /** Whether it passed. */
  readonly passed: boolean
  /** Settles as `promise` does, or resolves with undefined once the deadline passes, whichever comes first. */
  within<T>(promise: PromiseLike<T>): Promise<T | undefined>
}

export declare class Client extends EventEmitter {
  constructor(options: ClientOptions)
  request<T = unknown>(method: string, args: unknown, options: RequestOptions & { values: true }): Promise<T[]>
  request<T = unknown>(method: string, args?: unknown, options?: RequestOptions): Promise<T>
  /** Sends `method(args)` to every peer that serves it (connected or not), each pinned to its peer, under one deadline: each one's outcome. Rejects with ERR_ZEROMESH_NO_PEERS when none serves it within the timeout. */
  gather<T = unknown>(method: string, args: unknown, options: Omit<RequestOptions, 'hedge' | 'key' | 'endpoint'> & { values: true }): Promise<GatherResult<T[]>>
  gather<T = unknown>(method: string, args?: unknown, options?: Omit<RequestOptions, 'hedge' | 'key' | 'endpoint'>): Promise<GatherResult<T>>
  /** Adds a middleware to the end of this client's chain; returns the client. */
  use(fn: ClientMiddleware): this
  /** Opens a stream of `method(args)` on a peer that takes streams (docs/guides/streams.md). Throws at once on bad options. */
  stream<T = unknown>(method: string, args?: unknown, options?: StreamOptions): ClientStream<T>
  /** Publishes `event`: one delivery to one peer of each subscribing group (docs/guides/events.md). NoSubscribersError when no group subscribes within the deadline. */
  publish(event: string, payload?: unknown, options?: PublishOptions & { ack?: true }): Promise<{ delivered: Delivery[] }>
  publish(event: string, payload: unknown, options: PublishOptions & { ack: false }): Promise<{ sent: Delivery[] }>
  publish(event: string, payload?: unknown, options?: PublishOptions): Promise<PublishResult>
  /** Delivers `event` to every peer that subscribes to it, reporting each one's outcome; NoSubscribersError when none subscribes within the deadline. */
  broadcast(event: string, payload?: unknown, options?: BroadcastOptions): Promise<BroadcastResult>
  peers(): PeerInfo[]
  stats(): ClientStats
  /** A peer's view of the cluster (`from`, or a random up peer). */
  members(from?: string): Promise<Member[]>
  /** Whether `method` is served as a stream, by what the up peers serving it said: true (use stream()), false (request()), null when none has said yet. */
  streaming(method: string): boolean | null
  /** Resolves with the endpoints of the up peers that serve `method` once there is one; TimeoutError after `timeout`. */
  waitFor(method: string, options?: { timeout?: number, version?: string, where?: Record<string, string> | null }): Promise<string[]>
  /** Typed calls of `contract`: a function per method, its input checked before it is sent (docs/guides/contracts.md). */
  proxy<C extends import('../runtime/contract.js').Contract>(contract: C, options?: { validateInput?: boolean, validateOutput?: boolean }): ContractProxy<C>
  /** @deprecated since 0.3.0: use proxy(contract), the same thing ("service" names what a peer serves). */
  service<C extends import('../runtime/contract.js').Contract>(contract: C, options?: { validateInput?: boolean, validateOutput?: boolean }): ContractProxy<C>
  /** What the peer at `endpoint` serves, asked of it (connecting if needed); 'any' for an older peer. */
  describe(endpoint: string): Promise<import('../protocol/index.js').ServiceDescriptor | 'any'>
  /** A deadline of `timeout` ms (default: the client's timeout) on this client's clock, checked as a request's timeout (InvalidArgumentError). */
  deadline(timeout?: number): Deadline
  /** How `method` is served: 'stream', 'request', or null when the peers known serve it not and none may come. Rejects with NoPeersError after `timeout`, or after `connectTimeout` when no peer was ever up (then the error's `neverUp` is true). */
  howServed(method: string, options?: { timeout?: number, connectTimeout?: number }): Promise<'stream' | 'request' | null>
  /** The endpoints of every peer that serves `method`, as gather() reaches them (members outside the subset too, each dialled), once the client knows the cluster; NoPeersError when none within `timeout`. */
  serversOf(method: string, options?: { timeout?: number }): Promise<string[]>
  /** Takes no new call (ClosedError); with `drain`, lets the calls in flight settle for up to that many ms; then rejects what is left with ClosedError and closes the socket. */
  close(options?: { drain?: number }): Promise<void>
  /** Checks Client options as the constructor does, without making a client: throws InvalidArgumentError naming the option. */
  static checkOptions(options: ClientOptions): void
  on(event: 'peer', listener: (peer: PeerInfo) => void): this
  /** Code you gave (strategy, listener, logger) threw: a UserCodeError whose cause is what it threw. */
  on(event: 'error', listener: (err: Error) => void): this
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
  attemptTimeout: 'auto' | number
  maxAttempts: number
  maxPending: number
  maxPendingBytes: number
  retryBudget: Readonly<{ percent: number, minPerSecond: number, windowMs: number }>
  hedge: { delayMs: number } | null
  ejection: Readonly<{ after: number, baseMs: number, maxMs: number, maxShare: number }>
  discover: boolean
  refreshInterval: number
  membersTimeout: number
  maxPeers: number
  subset: number
  where: Record<string, string> | null
  zone: string | null
  streamWindow: Readonly<{ items: number, bytes: number }>
}>
export declare const strategyNames: readonly string[]

export { contract } from '../runtime/contract.js'
