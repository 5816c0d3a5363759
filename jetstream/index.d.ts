// Types of zeromesh/jetstream: durable events on NATS JetStream (docs/reference/durable.md).
// The NATS client packages (@nats-io/transport-node, @nats-io/jetstream) are the application's.
import type { DurableHook, Logger } from '../runtime/types.js'

export interface DurableEventsOptions {
  /** The durable event names: the same list on every Peer and Client. Each a NATS subject tail (tokens of no whitespace, '*' or '>', joined by '.'). */
  events: readonly string[]
  /** NATS URLs. Default 'nats://127.0.0.1:4222'. */
  servers?: string | readonly string[]
  /** A NatsConnection of the application's to use instead of connecting (it stays the application's to close). */
  connection?: object
  /** The stream. Default 'ZEROMESH_EVENTS'. */
  stream?: string
  /** Its subjects' prefix: events are stored under `<subjects>.<event>`. Default 'zeromesh.events'. */
  subjects?: string
  /** The dead-letter stream (subjects `<subjects>-dead.<event>`). Default `<stream>_DEAD`. */
  deadLetterStream?: string
  /** Make both streams when missing. Default true. */
  createStreams?: boolean
  /** ms within which a publish retried with the same id is stored once. Default 120000. */
  duplicateWindow?: number
  /** ms an event is kept in the stream (0: until the stream's limits). Default one week. */
  maxAge?: number
  /** Stream replicas. Default 1. */
  replicas?: number
  /** Where a new group starts: 'new' (events stored from then on, the default) or 'all' (the stream's start). */
  start?: 'new' | 'all'
  /** ms a delivery whose peer says nothing may wait before JetStream gives it to another peer. Default 10000. */
  ackWait?: number
  /** ms a handler may run before its attempt fails. Default 30000. */
  timeout?: number
  /** Attempts before the dead-letter stream. Default 5. */
  maxDeliver?: number
  /** ms to wait before the 2nd, 3rd... attempt; the last repeats. Default [1000, 5000, 15000, 30000]. */
  backoff?: readonly number[]
  /** A group's events out at once, all its peers together (1: one at a time, in order). Default 1000. */
  maxAckPending?: number
  /** A peer's durable events at once at most. Default: its free places (what bounds its requests). */
  maxInflight?: number
  /** Publishes waiting for JetStream's answer at once; beyond, BusyError. Default 1024. */
  maxPending?: number
  /** ms a publish waits for JetStream's confirmation. Default 5000. */
  publishTimeout?: number
  /** ms durableEvents() waits for NATS. Default 5000. */
  connectTimeout?: number
  /** Told of each dead letter, after it is stored. */
  onDeadLetter?: (letter: DeadLetter) => void | Promise<void>
  /** A pino logger, or anything with debug/info/warn/error(fields, message). Default: silent. */
  logger?: Logger
}

export interface DurablePublishOptions {
  /** The event id (Nats-Msg-Id): a publish retried with the same id is stored once. Default: a random UUID. */
  id?: string
  /** Headers for the subscribers' middleware and handlers (ctx.headers). */
  headers?: Record<string, string>
  /** ms to wait for JetStream's confirmation. Default: publishTimeout. */
  timeout?: number
  signal?: AbortSignal
}

/** What JetStream stored. */
export interface DurablePublishResult {
  id: string
  stream: string
  seq: number
  /** True when this id was stored already (within the duplicate window): nothing new was stored. */
  duplicate: boolean
}

export interface DeadLetter {
  event: string
  group: string
  id: string
  attempts: number
  error: { code: string, message: string }
  /** The decoded payload; undefined when it did not decode. */
  payload: unknown
  stream: string
  seq: number
  /** Where the dead letter was stored. */
  deadLetter: { stream: string, seq: number }
}

export interface DurableStats {
  connected: boolean
  publishes: { published: number, duplicates: number, failed: number, refused: number, pending: number }
  deliveries: { pulls: number, received: number, handled: number, failed: number, redelivered: number, refused: number, released: number, deadLettered: number, deadLetterErrors: number, undecodable: number, lost: number, pullErrors: number, running: number }
  /** reading: the consumer is made and this peer pulls from it. */
  consumers: Array<{ event: string, group: string, name: string, reading: boolean }>
}

/** The `durable` option of a Peer and a Client. */
export interface DurableEvents extends DurableHook {
  readonly events: readonly string[]
  owns(event: string): boolean
  publish(event: string, payload: unknown, options?: DurablePublishOptions): Promise<DurablePublishResult>
  /** The durable consumer `group` reads `event` through. */
  consumerName(group: string, event: string): string
  /** The subject `event` is stored under. */
  subjectOf(event: string): string
  stats(): DurableStats
  /** Closes the NATS connection it made. After peer.stop() and client.close(). */
  close(): Promise<void>
}

/** Connects to NATS, makes the streams, and resolves with the `durable` option. */
export declare function durableEvents(options: DurableEventsOptions): Promise<DurableEvents>

// The two errors are ZeromeshErrors at run time (instanceof holds); declared on Error here because
// their codes are zeromesh/jetstream's, outside the core's ErrorCode union.

/** NATS or JetStream cannot take the publish now (not connected, no stream, no confirmation in time). Retryable with the same id. */
export declare class DurableUnavailableError extends Error {
  static readonly code: 'ERR_ZEROMESH_DURABLE_UNAVAILABLE'
  readonly code: 'ERR_ZEROMESH_DURABLE_UNAVAILABLE'
  readonly retryable: true
  /** false: certainly not stored; null: it may have been (a lost confirmation). */
  readonly stored: false | null
}
/** @nats-io/transport-node or @nats-io/jetstream is not installed. */
export declare class DurableSetupError extends Error {
  static readonly code: 'ERR_ZEROMESH_DURABLE_SETUP'
  readonly code: 'ERR_ZEROMESH_DURABLE_SETUP'
  readonly retryable: false
}

/** Codes a dead letter's Zeromesh-Error-Code may carry besides a handler's own. */
export declare const DeadCode: {
  readonly UNDECODABLE: 'ERR_ZEROMESH_UNDECODABLE'
  readonly LOST: 'ERR_ZEROMESH_DELIVERY_LOST'
  readonly TIMEOUT: 'ERR_ZEROMESH_TIMEOUT'
}

/** The NATS headers zeromesh writes. */
export declare const Header: {
  readonly ID: 'Nats-Msg-Id'
  readonly EVENT: 'Zeromesh-Event'
  readonly HEADERS: 'Zeromesh-Headers'
  readonly ERROR_CODE: 'Zeromesh-Error-Code'
  readonly ERROR_MESSAGE: 'Zeromesh-Error-Message'
  readonly ATTEMPTS: 'Zeromesh-Attempts'
  readonly GROUP: 'Zeromesh-Group'
  readonly STREAM: 'Zeromesh-Stream'
  readonly SEQ: 'Zeromesh-Seq'
}

/** The durable consumer name of (group, event): docs/reference/durable.md#names. */
export declare function consumerName(group: string, event: string): string
/** A name in letters, digits and `_hh` escapes. */
export declare function escapeName(name: string): string
/** Why `event` cannot be a durable event's name, or null. */
export declare function subjectProblem(event: string): string | null

export declare const durableDefaults: Readonly<Required<Omit<DurableEventsOptions, 'events' | 'connection' | 'onDeadLetter' | 'logger' | 'servers' | 'deadLetterStream' | 'maxInflight'>> & { servers: string, deadLetterStream: null, maxInflight: null }>
