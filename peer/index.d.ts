// Types of zeromesh/peer.
/// <reference types="node" />
import { EventEmitter } from 'node:events'
import type { Member } from '../protocol/index.js'
import type { Clock, Logger, DnsOptions, Transport, Listener, Connector, DurableHook } from '../runtime/types.js'
export type { Logger, DnsOptions, Transport, Listener, Connector }

export type { Member }

/** What a handler gets besides its args. */
export interface RequestContext {
  /** 'request', 'stream' for a stream's handler, 'event' for a subscription's. */
  readonly kind: 'request' | 'stream' | 'event'
  /** An event's group (the subscription it ran for); null for a broadcast and for requests and streams. */
  readonly group: string | null
  /** The method name called. */
  readonly method: string
  /** The caller's request headers (PROTOCOL.md 4.1) as the peer's middleware left them; {} when none. Frozen. */
  readonly headers: Readonly<Record<string, string>>
  /** The client's id for this request. */
  readonly requestId: number
  /** A durable event's id (its Nats-Msg-Id: zeromesh/jetstream), or null: make the handler idempotent on it. */
  readonly eventId: string | null
  /** How many times the durable log delivered this event, this time included; 0 when not a durable event. */
  readonly deliveries: number
  /** This peer's advertised endpoint. */
  readonly endpoint: string
  /** Milliseconds the client had left when it sent the request; 0 = no deadline. */
  readonly timeoutMs: number
  /**
   * The deadline (Infinity without one), set once when the request arrived: on the peer's
   * clock on the main thread (`performance.now()` unless a clock was given), on
   * `performance.now()` in a worker thread; the same instant either way.
   */
  readonly deadline: number
  /** Milliseconds left before the client gives up. */
  remaining(): number
  /** Aborted when the deadline passes or the client cancels the request (for a stream: the reader stopped). */
  readonly signal: AbortSignal
  /** In a request stream (the client gave `input`): the client's items, as they come. */
  readonly input?: AsyncIterable<unknown>
  /**
   * The request's SERVER span context as the global OpenTelemetry propagator writes it
   * (`traceparent`, `tracestate`...), or null when not traced. In a worker thread, hand it to
   * `propagation.extract()` to continue the trace (docs/guides/observing.md).
   */
  readonly trace: Readonly<Record<string, string>> | null
  /** Publishes an event from this handler, as client.publish() does; its trace continues this one. In a worker thread too. */
  publish(event: string, payload?: unknown, options?: import('../client/index.js').PublishOptions): Promise<import('../client/index.js').PublishResult>
  /** Broadcasts an event from this handler, as client.broadcast() does. */
  broadcast(event: string, payload?: unknown, options?: import('../client/index.js').BroadcastOptions): Promise<import('../client/index.js').BroadcastResult>
}

/**
 * A handler. One that is an async generator function, or returns an async iterable or a
 * Readable, streams: clients call it with client.stream() (a plain request gets
 * ERR_ZEROMESH_STREAM_ONLY). A Buffer of 16 KiB or more that a handler returns or yields is
 * sent after it has gone on, without a copy: do not change it afterwards (docs/guides/streams.md).
 */
export type Handler = (args: any, ctx: RequestContext) => unknown

/**
 * What a peer middleware sees (docs/guides/middleware.md): the handler's ctx, on the main
 * thread, with the args, which it may replace, as it may `headers`, before next().
 */
export interface PeerMiddlewareContext extends Omit<RequestContext, 'headers'> {
  args: unknown
  headers: Readonly<Record<string, string>>
}
/**
 * `async (ctx, next) => ...`, around each request and stream before its handler (and before a
 * contract's input check, and the hand-off to a worker thread). next() resolves with the
 * handler's result (for a stream: once the handler started) and the middleware returns it, or
 * what it wants in its place. A throw fails the call with the error's message and `code`
 * (the client's `remoteCode`).
 */
export type PeerMiddleware = (ctx: PeerMiddlewareContext, next: () => Promise<unknown>) => unknown
export type Handlers = Record<string, Handler>

type Def = import('../runtime/contract.js').MethodDefinition
type In<S> = import('../runtime/contract.js').InputOf<S>
type Out<S> = import('../runtime/contract.js').OutputOf<S>
/** The handlers implement() takes: one per method, given the input schema's output, returning what the output schema accepts (items, for a stream). */
export type ContractHandlers<C extends import('../runtime/contract.js').Contract> = {
  [K in keyof C['methods']]: C['methods'][K] extends { stream: true }
    ? (input: Out<C['methods'][K]['input']>, ctx: RequestContext) => AsyncIterable<In<C['methods'][K]['output']>> | Promise<AsyncIterable<In<C['methods'][K]['output']>>>
    : (input: Out<C['methods'][K]['input']>, ctx: RequestContext) => In<C['methods'][K]['output']> | Promise<In<C['methods'][K]['output']>>
}
/**
 * The handlers of a contract's methods, named as the wire names them (`orders.get`), each
 * checking its input first: give it as a Peer's `handlers` (several as an array), or as a
 * handler module's default export. A method the contract names and `handlers` lacks, or one
 * it does not name, is an InvalidArgumentError.
 */
export declare function implement<C extends import('../runtime/contract.js').Contract>(contract: C, handlers: ContractHandlers<C>, options?: {
  /** Check each result (each item of a stream) against the output schema; a failure answers REMOTE 'ERR_ZEROMESH_INVALID_OUTPUT'. Default false. */
  validateOutput?: boolean
  /** Subscriptions made with on(): their group is this contract's name (docs/guides/events.md). */
  events?: import('../runtime/contract.js').Subscription[]
}): Handlers

/** A subscription's handler: the event's payload, and the ctx a handler gets (`kind` 'event'). */
export type EventHandler = (payload: any, ctx: RequestContext) => unknown
/** A Peer's `events`: handlers by event name (group: the event's name), `{ handler, group }`, or subscriptions made by on(). */
/** `eachThread`: in a handler module run in worker threads, every thread runs each delivery (docs/guides/events.md); the ack says how many did. */
export type PeerEvents = Record<string, EventHandler | { handler: EventHandler, group?: string, eachThread?: boolean }> | import('../runtime/contract.js').Subscription[]


export interface PeerOptions {
  /** Endpoint to bind; port 0 picks an ephemeral port. Default 'tcp://127.0.0.1:0'. */
  bind?: string
  /** Endpoint others should use, for a wildcard bind. Default: derived from the bound endpoint. */
  advertise?: string
  /** Peers to join through (array or comma-separated string). */
  seeds?: string[] | string
  /** Methods on the main thread (an object), or modules (URLs or paths) run in worker threads. */
  handlers?: Handlers | Handlers[] | URL | string | Array<URL | string>
  /** The events this peer subscribes to (docs/guides/events.md); peer.subscribe() adds more. */
  events?: PeerEvents
  /** Labels clients select this peer by ({ zone: 'a', tier: 'gold' }); `zone` is what a client's `zone` prefers. At most 32, keys and values of at most 63 characters. */
  labels?: Record<string, string>
  /** The semantic version of what this peer serves, for requests that ask a range (`version: '^2'`). Default: none. */
  serviceVersion?: string
  /** Requests this peer runs at full speed at once, for clients' zone spill-over. Default: the thread count with a handler module, else none. */
  capacity?: number
  /** Worker threads, with a handler module. Default: one per core. */
  threads?: number
  /** Requests waiting for a thread before busy. Default 64 x threads. */
  maxQueue?: number
  /** ...or fewer: at most this many ms of work by the measured time per request (at least one a thread). Default 100. */
  maxQueueMs?: number
  /** The request header whose value names the flow a call shares a busy peer in, across connections (docs/guides/deploying.md). Default: none, each connection is a flow. */
  flowHeader?: string
  /** Per-thread limits, as worker_threads takes them. */
  resourceLimits?: { maxOldGenerationSizeMb?: number, maxYoungGenerationSizeMb?: number, codeRangeSizeMb?: number, stackSizeMb?: number }
  /** Answers 10/FLP requests: body frames in, reply frames out. Default: echo. */
  flpHandler?: (body: Buffer[]) => Array<Buffer | Uint8Array | string> | Buffer | string | Promise<Array<Buffer | Uint8Array | string> | Buffer | string>
  /** Async handlers running at once before new requests are answered busy. Default 1024. */
  maxInflight?: number
  /** Bytes of requests taken and not answered yet, all connections together, before new ones are answered busy: the memory cap. Default 134217728 (128 MiB). */
  maxInflightBytes?: number
  /** Streams open at once, all connections together, before new ones are refused busy. Default 1024. */
  maxStreams?: number
  /** Streams open at once on one client connection. Default 64. */
  maxStreamsPerConnection?: number
  /** A stream waiting for credit whose client sent nothing for this long ends (its client is gone). Default 30000; 0: never. */
  streamIdleTimeout?: number
  /** What a request stream's client may send ahead of the handler's reading; held against maxInflightBytes while open. Default { items: 32, bytes: 1048576 }. */
  inputWindow?: { items?: number, bytes?: number }
  /** A full collection of the peer's heaps once it is idle after the process's memory grew (docs/guides/deploying.md, Memory). Default true. */
  collectWhenIdle?: boolean
  /**
   * RSS the process may use, in bytes: past 60% of it the peer collects every heap (at most every
   * 200 ms) and its maxInflightBytes shrinks in step, to nothing at 80%; past 80% after a
   * collection it closes every connection (clients reconnect) and answers new work busy.
   * Default 'cgroup': the container's memory limit, none without one; 0: none; at least 64 MiB.
   */
  memoryLimit?: number | 'cgroup'
  /** How long stop() waits for in-flight work. Default 10000. */
  drainTimeout?: number
  /** How long queued replies may take to leave once the socket closes (ZMQ_LINGER). Default 500. */
  stopLinger?: number
  /**
   * ZMTP pings from this peer's bound socket, PING heartbeats on its membership socket.
   * Default 0 (none): with ZMTP pings on, libzmq 4.3.5 aborts the process when a flooding
   * connection hangs up.
   */
  heartbeatInterval?: number
  /** With pings on: a connection silent this long is dropped (ZMTP timeout and TTL). Default 3000. */
  heartbeatTimeout?: number
  /** Largest frame accepted or sent, in bytes; also sizes each connection's queues (~32 MiB each way). Default 1048576. */
  maxMessageSize?: number
  /** Deepest nesting accepted in args. Default 64. */
  maxDepth?: number
  /** Most requests in one frame. Default 1024. */
  maxBatch?: number
  /** Metadata gossiped with this peer's membership (plain data, depth <= 8, at most 512 bytes packed with the `version` added). */
  meta?: Record<string, unknown>
  /** Membership (SWIM) tuning; see membershipDefaults. */
  membership?: MembershipOptions
  clock?: Clock
  /** Random source in [0, 1). Default Math.random. */
  random?: () => number
  /** Ms since 1970, for incarnations and the incarnation horizon. Default Date.now. */
  wallClock?: () => number
  /** The sockets: ZeroMQ by default; zeromesh/testing's MemoryNetwork gives an in-memory twin (a host's `transport`). */
  transport?: Transport
  /**
   * CURVE and the allow-list (docs/guides/security.md). Left out: plain, and only loopback, ipc and
   * inproc binds are accepted. `false`: plain anywhere, on purpose.
   */
  security?: PeerSecurity | false
  /** A pino logger, or anything with debug/info/warn/error(fields, message). Default: silent. */
  logger?: Logger
  /** DNS seeds (seeds of the form dns://NAME:PORT or dns+srv://_service._proto.NAME): servers, re-resolve interval, query timeout. */
  dns?: DnsOptions
  /** Durable events (zeromesh/jetstream's durableEvents()): this peer's subscriptions to them read their groups' JetStream consumers, not the mesh. */
  durable?: DurableHook | null
}

export interface PeerSecurity {
  /** The cluster's secret key (Z85, 40 characters; PREFIX.key of `zeromesh keygen`), shared by every peer. */
  clusterKey: string
  /**
   * Client public keys let in besides the cluster's: Z85 keys, `.pub` files or directories of
   * them (an array, or one comma-separated string). Files are read again by reloadAllowList().
   */
  allow?: string[] | string
}

/** A handshake the peer refused, as the 'refused' event reports it. */
export interface Refusal {
  /** 'key not allowed', 'not CURVE', 'wrong cluster key', or 'handshake error CODE'. */
  reason: string
  /** The client's public key (Z85), when the allow-list was asked. */
  key: string | null
  /** The client's IP address, when the allow-list was asked. */
  address: string | null
  /** Refusals of this reason and address since the last report (reports come once a minute at most). */
  repeats: number
}

export interface MembershipOptions {
  /** One member probed per interval. Default 250. */
  probeInterval?: number
  /** Wait for a direct probe's answer (scaled by local health). Default 200. */
  probeTimeout?: number
  /** Peers asked to probe when a direct probe fails. Default 3. */
  indirectChecks?: number
  /** Past 2 x monitors other members a peer probes only its subjects on `monitors` hashed rings (and is probed by about as many). Default 8. */
  monitors?: number
  /** Membership connections held at most; the subjects' are kept, others closed least recently used first. Default 32. */
  maxConnections?: number
  /** A membership connection that is not a subject's is closed once unused this long (0: only the bound closes it). Default 10000. */
  connectionIdleMs?: number
  /** While urgent changes (suspicions, refutations, deaths, leaves) wait, they are pushed this often... Default 100 (0: never). */
  gossipInterval?: number
  /** ...to this many connected subjects. Default 3. */
  gossipNodes?: number
  /** Suspicion lasts at least suspicionMult x probeInterval x max(1, log10 N). Default 6. */
  suspicionMult?: number
  /** ...and at most suspicionMaxMult times that. Default 4. */
  suspicionMaxMult?: number
  /** Each change is piggybacked retransmitMult x ceil(log10(N+1)) times. Default 4. */
  retransmitMult?: number
  /** Changes per message at most. Default 16. */
  maxPiggyback?: number
  /** State exchange with a random subject this often, less often above 32 members (0: never). Default 5000. */
  pushPullInterval?: number
  /** Claims such an exchange carries each way at most: the whole list up to this, a random sample past it. Default 128. */
  pushPullClaims?: number
  /** Wait for a push-pull answer. Default 1000. */
  syncTimeout?: number
  /** Push-pulls answered a second (a burst of twice that); past it a NACK. Default 20. */
  maxSyncsPerSecond?: number
  /** First pause before retrying unreachable seeds. Default 100. */
  joinRetryMin?: number
  /** Longest pause between seed retries. Default 5000. */
  joinRetryMax?: number
  /** How long stop() waits for members to acknowledge the leave. Default 300. */
  leaveTimeout?: number
  /** Members heard of second-hand and not yet verified by a probe, at most. Default 64. */
  maxCandidates?: number
  /** How long such a candidate may take to answer a probe. Default 5000. */
  candidateTimeout?: number
  /** Lifeguard local health: probe interval, probe timeout and suspicion scale up to awarenessMax + 1 times. Default 8; 0 turns it off. */
  awarenessMax?: number
  /** Dead and left members are forgotten after this. Default 30000. */
  reapAfter?: number
  /** A member that died is still tried by push-pull for this long (at most 256), so partitions heal. Default 86400000. */
  reconnectTimeout?: number
}


export interface PeerStats {
  /** Events (docs/guides/events.md): received, handled, failed (a handler threw), for no subscription here, refused (busy, draining), invalid, duplicates (a redelivery already run), run without an ack; and by event, for the events it subscribes to. Null before start. */
  events: { received: number, handled: number, failed: number, unknown: number, refused: number, invalid: number, duplicates: number, unacked: number, byEvent: Record<string, { received: number, handled: number, failed: number }> } | null
  /** Streams (docs/guides/streams.md): opened, ended normally, failed (the handler threw), cancelled by the client, refused at the open, reused ids, stray frames (an unknown stream), credit violations, ended for a silent client, drained, cut with a revoked key, expired, undeliverable (their client gone or not reading), item frames sent, open now, and bytes of item frames (and credit lent to threads) waiting to leave, at most half of maxInflightBytes, and the streams whose handler waits for its client's credit now. */
  streams: { opened: number, ended: number, failed: number, cancelled: number, refused: number, reused: number, stray: number, violations: number, silent: number, drained: number, cut: number, expired: number, undeliverable: number, items: number, open: number, held: number, awaitingCredit: number } | null
  received: number
  malformed: number
  flpPings: number
  flpRequests: number
  /** FLP messages dropped for exceeding maxMessageSize in all, or maxBatch frames. */
  flpTooLarge: number
  protocolErrors: number
  dropped: number
  /** Dropped replies by reason: 'client-gone', 'client-not-reading', 'closed', 'send-EAGAIN', ... */
  drops: Record<string, number>
  /** What the memory limit did: full collections, and times every connection was closed. */
  memory: { collections: number, sheds: number }
  duplicates: number
  requests: number
  ok: number
  errors: number
  unknown: number
  busy: number
  drained: number
  invalid: number
  cancelled: number
  /** Requests and events whose handler settled more than 100 ms after its signal aborted (cancel, deadline, drain): each held its place until then. */
  overran: number
  inflight: number
  /** Sharing a busy peer (docs/guides/deploying.md): the flows holding places now, and the calls taken past maxInflight for a flow below its share. */
  flows: { holding: number, byShare: number }
  /** With handlers in worker threads: ran, expired, abandoned, crashed, replaced, cancelled, startFailures, handoffs (messages that carried requests to threads), busyMs (time the threads spent running requests), size, load, queued, places (requests it takes now, running or queued: threads + maxQueue, fewer by maxQueueMs); else null. */
  threads: Record<string, number> | null
  /** Membership counters; `refused` counts claims and endpoints refused, by rule. */
  membership: Record<string, number | Record<string, number | null>>
  security: {
    secured: boolean
    /** Client keys on the allow-list now. */
    allowed: number
    /** Refused handshakes by reason. */
    refused: Record<string, number>
    /** Membership requests dropped for coming unsealed to a secured peer. */
    unsealed: number
    /** Sealed requests whose tag did not check out. */
    badSeals: number
    reloads: number
    /** Handshakes this peer's own gossip socket failed (members that could not prove the cluster key). */
    handshakeFailures: number
  }
}

export declare class Peer extends EventEmitter {
  constructor(options?: PeerOptions)
  /** Binds; resolves with the endpoint once requests can be served. */
  start(): Promise<string>
  /** The advertised endpoint, once started. */
  readonly endpoint: string | null
  readonly state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped'
  /** Joined (or no seeds) and serving; false from the moment it drains. What /readyz answers. */
  readonly ready: boolean
  stats(): PeerStats
  /** This peer's view of the cluster, itself included. */
  members(): Member[]
  /** What this peer serves, with the digest its claims carry. */
  service(): import('../protocol/index.js').ServiceDescriptor & { digest: number }
  /** Adds a middleware to the end of this peer's chain (a handler module's `middleware` is added at start); returns the peer. */
  use(fn: PeerMiddleware): this
  /** Serves `method` from now on (or replaces its handler); clients learn a new method within a member-list refresh. */
  serve(method: string, fn: (args: any, ctx: RequestContext) => unknown): void
  /** Stops serving `method`; requests for it are then answered UNKNOWN_METHOD, which clients retry elsewhere. Returns whether it was served. */
  unserve(method: string): boolean
  /** Subscribes `handler` to `event` in `group` (the event's name by default), or replaces that subscription's handler; clients learn it as they learn a new method. */
  subscribe(event: string, handler: EventHandler, options?: { group?: string }): void
  /** Ends the subscription of `event` in `group` (the event's name by default); returns whether there was one. */
  unsubscribe(event: string, options?: { group?: string }): boolean
  /** Publishes `event` from this peer, as client.publish() does. */
  publish(event: string, payload?: unknown, options?: import('../client/index.js').PublishOptions): Promise<import('../client/index.js').PublishResult>
  /** Broadcasts `event` from this peer, as client.broadcast() does. */
  broadcast(event: string, payload?: unknown, options?: import('../client/index.js').BroadcastOptions): Promise<import('../client/index.js').BroadcastResult>
  /** Graceful: announces its leave, refuses new work (draining), finishes in-flight work, closes. */
  stop(): Promise<void>
  on(event: 'member', listener: (member: Member) => void): this
  /** Code you gave (a listener, the logger) threw: a UserCodeError whose cause is what it threw. */
  on(event: 'error', listener: (err: Error) => void): this
  /** No handler thread can be started any more: the peer stops, leaving the cluster. */
  on(event: 'unhealthy', listener: (err: Error) => void): this
  /** This peer's own handshake with a member or seed failed (another cluster key, or plain vs CURVE); once per endpoint per minute. */
  on(event: 'handshake-failed', listener: (failure: { endpoint: string, reason: string, repeats: number }) => void): this
  /** Reached a seed and joined the cluster. */
  on(event: 'joined', listener: (info: { through: string[] }) => void): this
  /** A join attempt reached no seed; the peer serves alone and tries again after `retryIn` ms. */
  on(event: 'seeds-unreachable', listener: (info: { seeds: string[], attempts: number, retryIn: number }) => void): this
  /** A handshake refused; once per reason and address per minute. */
  on(event: 'refused', listener: (refusal: Refusal) => void): this
  /** Reads security.allow again; resolves with how many client keys are allowed now. The list in force stays on an error. */
  reloadAllowList(): Promise<{ keys: number }>
  on(event: string | symbol, listener: (...args: any[]) => void): this
}

export declare const membershipDefaults: Readonly<Required<MembershipOptions>>

export declare const peerDefaults: Readonly<Required<Pick<PeerOptions,
  'bind' | 'maxInflight' | 'maxInflightBytes' | 'drainTimeout' | 'stopLinger' | 'heartbeatInterval' | 'heartbeatTimeout' | 'maxMessageSize' | 'maxDepth' | 'maxBatch' | 'maxStreams' | 'maxStreamsPerConnection' | 'streamIdleTimeout' | 'collectWhenIdle'>>> & { readonly memoryLimit: 'cgroup' } & { readonly inputWindow: Readonly<{ items: number, bytes: number }> }

export { contract, on } from '../runtime/contract.js'
