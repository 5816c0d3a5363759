// zeromesh/testing: handlers, clients and whole clusters in one process, without sockets or
// sleeping (README, Testing without sockets).
import type { Transport } from '../peer/index.js'

/** Time that moves only when told; every host of a MemoryNetwork runs its timers on it. */
export declare class VirtualClock {
  constructor (start?: number)
  now (): number
  setTimeout (fn: () => void, ms: number): number
  clearTimeout (id: number | null | undefined): void
  /** Moves time forward by `ms`, running every timer due on the way and letting the promises they start settle. */
  advance (ms: number): Promise<void>
}

/** One process on a MemoryNetwork: give its clock and transport to a Peer or a Client. */
export interface MemoryHost {
  readonly name: string
  /** This host's timers: they wait while it is frozen. */
  readonly clock: { now(): number, setTimeout(fn: () => void, ms: number): unknown, clearTimeout(t: unknown): void }
  /** For Peer's and Client's `transport` option. */
  readonly transport: Transport
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

/** The in-memory twin of the ZeroMQ transports: connections behave as ZeroMQ over TCP does, with faults per host. */
export declare class MemoryNetwork {
  constructor (options: { clock: VirtualClock | { now(): number, setTimeout: Function, clearTimeout: Function }, random: () => number, delay?: number, jitter?: number })
  /** The host of that name (one per process), made on first use. */
  host (name: string): MemoryHost
  /** Cuts every link between two groups of hosts (names) until heal(). */
  partition (a: string[], b: string[]): void
  heal (): void
}

/** A random source in [0, 1) that replays from its seed. */
export declare function seededRandom (seed?: number): () => number
