// zeromesh/testing: handlers, clients and whole clusters in one process, without sockets or
// sleeping (docs/guides/testing.md).
import type { Transport, Connector, Listener } from '../runtime/types.js'

/** Time that moves only when told; every host of a MemoryNetwork runs its timers on it. */
export declare class VirtualClock {
  constructor (start?: number)
  now (): number
  setTimeout (fn: () => void, ms: number): number
  clearTimeout (id: number | null | undefined): void
  /** Moves time forward by `ms`, running every timer due on the way and letting the promises they start settle. */
  advance (ms: number): Promise<void>
  /**
   * `promise`'s value (or its error), time moved on `step` ms at a time (default 5) until it
   * settles; rejects with a TimeoutError (ERR_ZEROMESH_TIMEOUT) once `within` ms of this clock's
   * time (default 60000) passed without that.
   */
  settle<T> (promise: PromiseLike<T> | T, options?: { step?: number, within?: number }): Promise<T>
  /**
   * `fn()`'s value once it stops throwing or rejecting, time moved on `step` ms between tries
   * (default 5); rejects with its last error once `within` ms of this clock's time (default
   * 10000) passed. For a condition: `clock.until(() => assert.equal(peer.stats().inflight, 0))`.
   */
  until<T> (fn: () => T | PromiseLike<T>, options?: { step?: number, within?: number }): Promise<T>
}

/** One process on a MemoryNetwork: give its clock and transport to a Peer or a Client. */
export interface MemoryHost {
  readonly name: string
  /** This host's timers: they wait while it is frozen. */
  readonly clock: { now(): number, setTimeout(fn: () => void, ms: number): unknown, clearTimeout(t: unknown): void }
  /** For Peer's and Client's `transport` option. */
  readonly transport: Transport
  /** The same factories as `transport`'s; a connector made here has two controls for tests. */
  listener (options: Record<string, unknown>): Listener
  connector (options: Record<string, unknown>): MemoryConnector
  /** Per message on this host's link, each way: a lost message is retransmitted, so it comes late (TCP). 0..1. */
  loss: number
  /** Added one way, each way, ms. */
  delay: number
  /** Gone without a word, as on SIGKILL: its sockets close, nothing of it runs again. */
  kill (): void
  /** Runs nothing until thaw(), as on SIGSTOP; its connections stall. */
  freeze (): void
  thaw (): void
}

/**
 * A connecting socket on a MemoryHost. As ZeroMQ's (with `immediate` off), what is sent before
 * a connection is up waits for it; a connection is tried again every 100 ms until it is up.
 */
export interface MemoryConnector extends Connector {
  /** Tries the connection to `endpoint` now rather than at its next retry: up (onUp) before this returns when the listener is there and reachable. */
  dialNow (endpoint: string): void
  /** The connection to `endpoint` breaks now, as on a reset: onDown, then it is dialled again. */
  drop (endpoint: string): void
}

/** The in-memory twin of the ZeroMQ transports: connections behave as ZeroMQ over TCP does, with faults per host. */
export declare class MemoryNetwork {
  /** `delay`: one way, ms (default 0.5); `jitter`: up to this much more per message; `loss`: of every message on every link, 0..1 (retransmitted, so late). */
  constructor (options: { clock: VirtualClock | { now(): number, setTimeout: Function, clearTimeout: Function }, random: () => number, delay?: number, jitter?: number, loss?: number })
  /** The host of that name (one per process), made on first use. */
  host (name: string): MemoryHost
  /** Cuts every link between two groups of hosts (names) until heal(). */
  partition (a: string[], b: string[]): void
  /** Heals every cut, or only those between two groups of hosts when given; stalled messages go on. */
  heal (a?: string[], b?: string[]): void
}

/** A random source in [0, 1) that replays from its seed. */
export declare function seededRandom (seed?: number): () => number
