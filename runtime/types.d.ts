// The types Peer, Client and zeromesh/testing share, defined once here and re-exported by the
// entries that offer them (zeromesh, zeromesh/peer, zeromesh/client, zeromesh/protocol,
// zeromesh/testing). Durations are milliseconds everywhere.
/// <reference types="node" />

/** Where time comes from; inject a fake one in tests. */
export interface Clock {
  now(): number
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** A pino logger, or anything with debug, info, warn and error taking (fields, message). */
export interface Logger {
  debug(fields: object, message: string): void
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
}

export interface DnsOptions {
  /** 'IP' or 'IP:PORT'. Default: the system's resolvers. */
  servers?: string[]
  /** Resolve again this often, ms (0: only at start and when nothing is reachable). Default 30000. */
  interval?: number
  /** Per query, ms. Default 2000. */
  timeout?: number
}

/** A bound socket a Peer serves on. */
export interface Listener {
  bind(): Promise<string>
  readonly endpoint: string | null
  readonly open: boolean
  send(clientId: Buffer, frames: Buffer[]): void
  close(): Promise<void>
}

/** A connecting socket that addresses peers by endpoint. */
export interface Connector {
  connect(endpoint: string): boolean
  disconnect(endpoint: string): void
  send(endpoint: string, frames: Buffer[], done?: (code: string | null) => void): void
  close(): Promise<void>
}

export interface Transport {
  listener(options: Record<string, unknown>): Listener
  connector(options: Record<string, unknown>): Connector
}

/**
 * The `durable` option of a Peer and a Client (runtime/durable-hook.js): what zeromesh/jetstream's
 * durableEvents() resolves with. Its events go to and come from a durable log, never the mesh.
 */
export interface DurableHook {
  /** Whether `event` is durable. */
  owns(event: string): boolean
  /** A Client's publish of a durable event. */
  publish(event: string, payload: unknown, options?: object): Promise<unknown>
  /** A Peer, once running, hands over its subscriptions to durable events. */
  attach(host: object): Promise<void>
  /** The Peer stops: take nothing new, finish or give back what it holds, within `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>
}
