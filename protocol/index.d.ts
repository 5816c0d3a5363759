// zeromesh/protocol: the wire format (protocol/PROTOCOL.md): its numbers and limits, the codec,
/// <reference types="node" />
// the service digest, the key proof, the errors, and the shapes on the wire (members, service
// descriptors). Durations are milliseconds everywhere.

export type { Clock } from '../runtime/types.js'

/** A member as a peer sees it. */
export interface Member {
  endpoint: string
  state: 'alive' | 'suspect' | 'dead' | 'left'
  incarnation: number
  meta: Record<string, unknown>
  /** The digest of what the member serves (PROTOCOL.md 4.8); null when its claims carry none (an older peer). */
  service: number | null
}

/** What a peer serves, by its own word (PROTOCOL.md 4.8). */
/** One issue of a refused input: where (keys and indexes) and why. Never the value. */
export interface Issue {
  path: Array<string | number>
  message: string
}

/** A contract method as a peer states it (client.describe(), `zeromesh describe`): its JSON Schemas where the schemas give them. */
export interface DescribedMethod {
  /** The wire name, `contract.method`. */
  name: string
  method: string
  stream: boolean
  /** JSON Schema (draft 2020-12) of the input, or null. */
  input: unknown
  output: unknown
}
export interface DescribedContract {
  name: string
  version: string | null
  methods: DescribedMethod[]
  /** The events it publishes, each with the JSON Schema of its payload (or null); [] when none. */
  events: DescribedEvent[]
}
/** A contract event as a peer states it: its wire name (`orders.placed`) and its payload's JSON Schema. */
export interface DescribedEvent {
  name: string
  event: string
  payload: unknown
}

export interface ServiceDescriptor {
  methods: string[]
  /** Semantic version, or null. */
  version: string | null
  labels: Record<string, string>
  /** Requests it runs at full speed at once, or null (not declared). */
  capacity: number | null
  /** The contracts it implements (implement()), with their JSON Schemas; [] when none. */
  contracts: DescribedContract[]
  /** What it subscribes to: each event with its group (docs/guides/events.md); [] when none. */
  events: Array<{ event: string, group: string }>
  /** The methods it serves as streams (PROTOCOL.md 4.8.2: async generator handlers, a contract's stream methods); [] when none. */
  streams: string[]
}

/**
 * Every `code` a zeromesh error carries: a union, so a misspelt code in a comparison is a
 * compile error and a `switch` narrows. A handler's own codes are not here: they arrive as
 * RemoteError's `remoteCode` (a string). 'ERR_ZEROMESH' is a bare ZeromeshError's.
 */
export type ErrorCode =
  | 'ERR_ZEROMESH_TIMEOUT' | 'ERR_ZEROMESH_NO_PEERS' | 'ERR_ZEROMESH_UNKNOWN_METHOD'
  | 'ERR_ZEROMESH_REMOTE' | 'ERR_ZEROMESH_BUSY' | 'ERR_ZEROMESH_DRAINING' | 'ERR_ZEROMESH_CLOSED'
  | 'ERR_ZEROMESH_INVALID_ARGUMENT' | 'ERR_ZEROMESH_CONNECTION_LOST' | 'ERR_ZEROMESH_ABORTED'
  | 'ERR_ZEROMESH_PROTOCOL' | 'ERR_ZEROMESH_HANDSHAKE' | 'ERR_ZEROMESH_USER_CODE' | 'ERR_ZEROMESH_INVALID_INPUT'
  | 'ERR_ZEROMESH_INVALID_OUTPUT' | 'ERR_ZEROMESH_NO_SUBSCRIBERS' | 'ERR_ZEROMESH'

export declare class ZeromeshError extends Error {
  constructor(message?: string, options?: { code?: ErrorCode, retryable?: boolean, cause?: unknown })
  /** Stable: match on this, not on the message. */
  readonly code: ErrorCode
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
  /** With remoteCode 'ERR_ZEROMESH_INVALID_OUTPUT': where the handler's result broke its contract. */
  readonly issues?: Issue[]
}
/** A result its contract's output schema refuses, found by client.proxy()'s validateOutput (from a peer's check it is a RemoteError with this remoteCode). Not retryable. */
export declare class InvalidOutputError extends ZeromeshError {
  constructor(message?: string, options?: { issues?: Issue[], cause?: unknown })
  readonly issues: Issue[]
}
/** A contract's input schema refused the arguments, in the client before sending or at the peer; the handler never ran. Not retryable. */
export declare class InvalidInputError extends ZeromeshError {
  constructor(message?: string, options?: { issues?: Issue[], cause?: unknown })
  readonly issues: Issue[]
}
export declare class BusyError extends ZeromeshError {}
export declare class DrainingError extends ZeromeshError {}
export declare class ClosedError extends ZeromeshError {}
export declare class InvalidArgumentError extends ZeromeshError {}
export declare class ConnectionLostError extends ZeromeshError {}
export declare class AbortError extends ZeromeshError {}
/** No peer subscribed to the event (in the group asked for) within the deadline. Retryable. */
export declare class NoSubscribersError extends ZeromeshError {}
/** The peer refused this client at the ZeroMQ handshake (key not allowed, wrong cluster key, CURVE on one side only). Not retryable. */
export declare class HandshakeError extends ZeromeshError {}
/** Code the user gave (a strategy, an event listener, a logger) threw; `cause` is what it threw. */
export declare class UserCodeError extends ZeromeshError {}
export declare class ProtocolError extends ZeromeshError {
  /** Set when the sender should be told with an ERROR frame. */
  protocolCode?: number
}


export declare const SIGNATURE: readonly number[]
export declare const HEADER_SIZE: 5
export declare const PROTOCOL_VERSION: number
export declare const PROTOCOL_VERSION_MIN: number
export declare const PROTOCOL_VERSION_MAX: number
/** The codes a peer itself puts in a REMOTE answer (err.remoteCode), beside the handler's own. */
export declare const RemoteCode: Readonly<{ EXPIRED: 'ERR_ZEROMESH_EXPIRED', ENCODE: 'ERR_ZEROMESH_ENCODE', WORKER_EXIT: 'ERR_ZEROMESH_WORKER_EXIT', TOO_LARGE: 'ERR_ZEROMESH_TOO_LARGE', STREAM_ONLY: 'ERR_ZEROMESH_STREAM_ONLY', INVALID_INPUT: 'ERR_ZEROMESH_INVALID_INPUT', INVALID_OUTPUT: 'ERR_ZEROMESH_INVALID_OUTPUT' }>
export declare const MessageType: Readonly<{ REQUEST: 1, REPLY: 2, PING: 3, PONG: 4, ERROR: 5, PROBE: 6, ACK: 7, PROBE_REQ: 8, NACK: 9, SYNC: 10, MEMBERS_GET: 11, MEMBERS: 12, CANCEL: 13, SEALED: 14, SERVICE_GET: 15, SERVICE: 16, KEY_PROOF: 17, STREAM_OPEN: 18, STREAM_ITEM: 19, STREAM_CREDIT: 20, STREAM_END: 21, EVENT: 22 }>
/** What a peer can do beyond the base protocol: bits of a SERVICE answer's `features`. */
export declare const Feature: Readonly<{ STREAMS: 1, EVENTS: 2 }>
/** Bits of a REQUEST entry's `accepts` field: what the sender reads in its replies (PROTOCOL.md 4.1). */
export declare const Accepts: Readonly<{ BULK: 1, VALUES: 2 }>
/** The smallest Buffer a peer sends in a bulk frame of its own (PROTOCOL.md 4.2.1). */
export declare const BULK_MIN_BYTES: number
export declare const MemberState: Readonly<{ ALIVE: 0, SUSPECT: 1, DEAD: 2, LEFT: 3 }>
export declare const memberStateNames: readonly ['alive', 'suspect', 'dead', 'left']
/** Whether claim b about a member outranks claim a: higher incarnation, then alive < suspect < dead < left. */
export declare function outranks(b: { incarnation: number, state: number }, a: { incarnation: number, state: number }): boolean
export declare const Status: Readonly<{ OK: 0, UNKNOWN_METHOD: 1, REMOTE: 2, BUSY: 3, DRAINING: 4, INVALID_REQUEST: 5, VALUES: 6 }>
export declare const ProtocolErrorCode: Readonly<{ UNSUPPORTED_VERSION: 1, UNKNOWN_TYPE: 2 }>
export declare const FLP_PING: 'PING'
export declare const FLP_PONG: 'PONG'
export declare const MAX_REQUEST_ID: number
/** The protocol's limits (PROTOCOL.md section 3.3); each is an option of Peer and Client as well. */
export declare const Limits: Readonly<{
  maxMessageSize: number, maxDepth: number, maxBatch: number, maxMethodLength: number, maxMembers: number, maxMetaDepth: number,
  maxMetaBytes: number, maxMethods: number, maxVersionLength: number, maxLabels: number, maxLabelLength: number,
  maxTraceFields: number, maxTraceKeyLength: number, maxTraceValueLength: number, maxStreams: number, maxStreamsPerConnection: number,
  maxCreditItems: number, maxCreditBytes: number, maxHeaders: number, maxHeaderKeyLength: number, maxHeaderValueLength: number,
  maxHeaderBytes: number, maxIssues: number, maxIssueMessageLength: number, maxIssuePathLength: number, maxIssueSegmentLength: number,
  maxSchemaBytes: number, maxContractsBytes: number, maxEventLength: number, maxSubscriptions: number,
}>
/** How far ahead of the receiver's wall clock (ms since 1970) a member's incarnation may be (PROTOCOL.md 4.6). */
export declare const INCARNATION_HORIZON_MS: number
/** How long a peer waits by default for a word from a stream's client; clients say "still here" every third of it (PROTOCOL.md 4.10). */
export declare const STREAM_IDLE_MS: number
/** A status's name by its number (`statusNames[3]` is 'BUSY'). */
export declare const statusNames: Readonly<Record<number, string>>

/** What a peer believes about one member. */
export interface Claim { endpoint: string, incarnation: number, state: number, meta: Record<string, unknown>, by?: string }
export type GossipMessage =
  | { type: 'probe' | 'probe-req', from: string, target: string, updates: Claim[] }
  | { type: 'ack', from: string, updates: Claim[] }
  | { type: 'nack', from: string }
  | { type: 'sync', from: string, members: Claim[] }

export type RequestEntry = [id: number, method: string, args: unknown, timeoutMs: number]
export type ReplyEntry = [id: number, status: number, value: unknown]

export interface DecodedRequest { type: 1, version: number, requests: Array<{ id: number, method: string, args: unknown, timeoutMs: number }>, invalid: Array<{ id: number, reason: string }> }
export interface DecodedReply { type: 2, version: number, meta: Record<string, unknown>, replies: Array<{ id: number, status: number, value?: unknown, message?: string, code?: string | null }> }
export interface DecodedPing { type: 3, version: number, seq: number }
export interface DecodedPong { type: 4, version: number, seq: number, meta: Record<string, unknown> }
export interface DecodedError { type: 5, version: number, code: number, message: string, minVersion: number, maxVersion: number }
export interface DecodedGossip { type: 6 | 7 | 8 | 9 | 10, version: number, seq: number, gossip: GossipMessage }
export interface DecodedMembersGet { type: 11, version: number, seq: number }
export interface DecodedMembers { type: 12, version: number, seq: number, membersVersion: number, members: Claim[] }
export interface DecodedCancel { type: 13, version: number, ids: number[] }
/** An EVENT frame (PROTOCOL.md 4.11), checked: the entries to run, and those refused (answered INVALID_REQUEST when they ask for an ack). */
export interface DecodedEvent { type: 22, version: number, events: Array<{ id: number, event: string, payload: unknown, timeoutMs: number, group: string | null, ack: boolean, trace: Record<string, string> | null, headers: Record<string, string> }>, invalid: Array<{ id: number, ack: boolean, reason: string }> }
export type Decoded = DecodedCancel | DecodedRequest | DecodedReply | DecodedPing | DecodedPong | DecodedError | DecodedGossip | DecodedMembersGet | DecodedMembers | DecodedEvent

/** An EVENT entry: [id, event, payload, timeoutMs, group (null: every subscription, a broadcast), ack, trace?, headers?] (PROTOCOL.md 4.11). */
export type EventEntry = [id: number, event: string, payload: unknown, timeoutMs: number, group: string | null, ack: boolean, trace?: Record<string, string> | null, headers?: Record<string, string>]
/** EVENT (PROTOCOL.md 4.11): one or more events for a peer; each entry that asks for an ack is answered by a REPLY entry once its handlers finished. */
export declare function encodeEvent(entries: EventEntry[]): Buffer

export declare function encodeRequest(entries: RequestEntry[]): Buffer
export declare function encodeReply(meta: Record<string, unknown>, entries: ReplyEntry[]): Buffer
export declare function encodePing(seq: number): Buffer
export declare function encodePong(seq: number, meta: Record<string, unknown>): Buffer
export declare function encodeError(code: number, message: string): Buffer
export declare function encodeGossip(seq: number, msg: GossipMessage): Buffer
export declare function encodeMembersGet(seq: number): Buffer
export declare function encodeCancel(ids: number[]): Buffer
/** KEY_PROOF (PROTOCOL.md 4.9): a client's raw 32-byte public key and its 32-byte proof. */
export declare function encodeKeyProof(key: Uint8Array, mac: Uint8Array): Buffer
/** The proof of a key for challenge `ch`: HMAC-SHA256 keyed with X25519(own secret, other public). Raw 32-byte keys. */
export declare function keyProof(own: { secret: Uint8Array, publicKey: Uint8Array }, otherPublic: Uint8Array, ch: Uint8Array): Buffer
export declare function checkKeyProof(own: { secret: Uint8Array, publicKey: Uint8Array }, clientPublic: Uint8Array, ch: Uint8Array, mac: Uint8Array): boolean
export declare function encodeMembers(seq: number, digest: number, members: Claim[]): Buffer
/**
 * STREAM_OPEN (PROTOCOL.md 4.10): a stream's id, method, args, whole deadline (0: none), first
 * credit, whether the client sends items too, its trace field (null: none) and what it reads in
 * item messages (bits of `Accepts`; `Accepts.BULK`: large binary items in frames of their own).
 */
export declare function encodeStreamOpen(id: number, method: string, args: unknown, timeoutMs: number, items: number, bytes: number, input: boolean, trace?: Record<string, string> | null, accepts?: number): Buffer
/** STREAM_ITEM: items of stream `id`, within the receiver's credit. */
export declare function encodeStreamItems(id: number, items: unknown[]): Buffer
/** STREAM_CREDIT: `items` and `bytes` more for the sender; 0 and 0 say "still here". */
export declare function encodeStreamCredit(id: number, items: number, bytes: number): Buffer
/** STREAM_END: the sender's side is over after `count` items; `value` is [message, code] unless status is OK. */
export declare function encodeStreamEnd(id: number, status: number, value: [string, string | null] | null, count: number): Buffer
export declare function decode(frame: Uint8Array, limits?: Partial<{ maxMessageSize: number, maxDepth: number, maxBatch: number, maxMethodLength: number }>): Decoded
export declare function hasSignature(frame: Uint8Array): boolean
/** SEALED (PROTOCOL.md 4.7): a membership request `inner` (a whole frame) and its 32-byte tag. */
export declare function encodeSealed(tag: Uint8Array, inner: Uint8Array): Buffer
/** SERVICE_GET (PROTOCOL.md 4.8): what does this peer serve? */
export declare function encodeServiceGet(seq: number): Buffer
/** SERVICE: a peer's own descriptor (describeService()) and its Feature bits. */
export declare function encodeService(seq: number, descriptor: ServiceDescriptor & { digest: number }, features?: number): Buffer
/** The digest of a descriptor (PROTOCOL.md 4.8): FNV-1a over its canonical text. */
export declare function serviceDigest(descriptor: { methods: string[], version: string | null, labels: Record<string, string>, capacity: number | null }): number
/** A descriptor with its digest, as a peer states it (encodeService). */
export declare function describeService(descriptor: { methods: string[], version: string | null, labels: Record<string, string>, capacity: number | null, contracts?: unknown }): ServiceDescriptor & { digest: number }
