// Caps on who may finish a handshake with a secured peer, asked by its ZAP policy with the
// client's address: connections in total and per source address, and handshakes a second
// per address (a token bucket). Holders of the cluster key (peers) are not capped. libzmq
// cannot close one accepted connection, nor refuse one before its handshake, so the caps
// work at ZAP: a handshake past a cap is refused, and its connection closes at once.
// Open connections are counted from the kernel's TCP table (Linux; refusal-addresses.js reads
// the same table), plus the handshakes admitted since its last read: an upper bound, since
// connections that closed since are still counted. So the table is read again (at most every
// REFRESH_MS) only when that bound comes within half of a cap: reading it costs the kernel a
// walk of every TCP socket on the machine, whatever the namespace (about 30 ms at 6,000), and
// 120 peers reading it at every client's handshake took most of the lab's CPU.
// Elsewhere than Linux only the rate cap applies.
import { establishedByAddress } from './tcp-table.js'

const REFRESH_MS = 250
const MAX_BUCKETS = 65536 // addresses tracked for the rate at once; past it the map starts over

export const capDefaults = Object.freeze({
  maxConnections: 4096, //           established connections in all, from clients
  maxConnectionsPerAddress: 256, //  from one source address
  handshakesPerSecond: 64, //        per source address, with a burst of twice that
})

export class ConnectionCaps {
  /**
   * @param {object} o
   * @param {() => number|null} o.port  the bound TCP port (null: not TCP, no counting)
   * @param {{ now(): number }} o.clock
   * @param {number} [o.maxConnections]
   * @param {number} [o.maxConnectionsPerAddress]
   * @param {number} [o.handshakesPerSecond]
   * @param {(port: number) => Map<string, number>|null} [o.established]  for tests: address -> count
   */
  constructor (o) {
    this.port = o.port
    this.clock = o.clock
    this.maxConnections = o.maxConnections ?? capDefaults.maxConnections
    this.maxPerAddress = o.maxConnectionsPerAddress ?? capDefaults.maxConnectionsPerAddress
    this.rate = o.handshakesPerSecond ?? capDefaults.handshakesPerSecond
    this.established = o.established ?? establishedByAddress
    this.counts = null //     address -> connections, as of the last read, plus admissions since
    this.total = 0
    this.readAt = -Infinity
    this.buckets = new Map() // address -> { tokens, at }
  }

  /** Null when a client at `address` may finish its handshake, else why not. */
  admit (address) {
    const now = this.clock.now()
    if (!this.take(address, now)) return 'handshake rate'
    // A table read now already holds this connection (TCP is up before the handshake ends);
    // one read earlier does not, so it is added.
    const fresh = this.near(address) && this.refresh(now)
    if (this.counts !== null) {
      const here = (this.counts.get(address) ?? 0) + (fresh ? 0 : 1)
      const total = this.total + (fresh ? 0 : 1)
      if (total > this.maxConnections) return 'too many connections'
      if (here > this.maxPerAddress) return 'too many connections from this address'
      if (!fresh) { this.counts.set(address, here); this.total = total }
    }
    return null
  }

  /** A token from `address`'s bucket (rate a second, twice that at most in store). */
  take (address, now) {
    let b = this.buckets.get(address)
    if (b === undefined) {
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear()
      this.buckets.set(address, b = { tokens: 2 * this.rate, at: now })
    }
    b.tokens = Math.min(2 * this.rate, b.tokens + (now - b.at) * this.rate / 1000)
    b.at = now
    if (b.tokens < 1) return false
    b.tokens--
    return true
  }

  /** Whether the bound on connections is within half of a cap (or there is none yet): a read is worth its cost. */
  near (address) {
    if (this.counts === null) return true
    return 2 * (this.total + 1) > this.maxConnections || 2 * ((this.counts.get(address) ?? 0) + 1) > this.maxPerAddress
  }

  /** Reads the table again if it is REFRESH_MS old; true if it did. */
  refresh (now) {
    if (now - this.readAt < REFRESH_MS) return false
    this.readAt = now
    const port = this.port()
    this.counts = port === null ? null : this.established(port)
    this.total = 0
    if (this.counts !== null) for (const n of this.counts.values()) this.total += n
    return true
  }
}
