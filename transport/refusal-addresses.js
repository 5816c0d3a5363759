// Who a refused handshake came from, when libzmq does not say. A handshake that fails before
// ZAP is asked (a wrong cluster key, a client without CURVE) is reported by the socket monitor
// with the listener's own endpoint, never the client's. The connection it refused is closed
// by this side, so on Linux it shows in the kernel's TCP table (/proc/net/tcp and tcp6, this
// process's network namespace) in a closing state (FIN_WAIT1, FIN_WAIT2, TIME_WAIT, CLOSING)
// with the client's address. Connections on the listening port that entered one of those
// states since the last look are the refused ones: one address when they all came from one
// host, else the few hosts they came from. Best effort: elsewhere than Linux, or when this
// side closed a working connection at the same moment, the answer is null or a short list.
import { connectionsToAsync } from './tcp-table.js'

const CLOSING = new Set(['04', '05', '06', '0B']) // FIN_WAIT1, FIN_WAIT2, TIME_WAIT, CLOSING
const SETTLE_MS = 20 //      libzmq closes the socket just after it reports the failure
const MIN_GAP_MS = 250 //    a flood of refusals reads the table at most 4 times a second
const MAX_HOSTS = 4 //       a list longer than this says "several"
const MAX_SEEN = 65536 //    bounded memory: a flood's closed connections are forgotten past this

/**
 * Reads which remote hosts' connections to `port` this side closed since the last call.
 * @param {number} port
 * @param {Set<string>} seen  "ip:port" of closing connections already accounted for (updated)
 * @returns {Promise<string[]>}  the new ones' hosts, distinct, in table order
 */
export async function closedSince (port, seen) {
  const hosts = []
  const now = new Set()
  for (const [state, host, remotePort] of (await connectionsToAsync(port)) ?? []) {
    if (!CLOSING.has(state)) continue
    const key = `${host}:${remotePort}`
    now.add(key)
    if (!seen.has(key) && !hosts.includes(host)) hosts.push(host)
  }
  seen.clear()
  for (const key of now) { if (seen.size < MAX_SEEN) seen.add(key) }
  return hosts
}

/**
 * Attributes refusals the monitor reported without an address. `note(report)` queues a
 * report; shortly after, one look at the TCP table gives each queued report its `address`
 * (one host, "a, b" for a few, null when none or many) and calls `report` for it.
 */
export class RefusalAddresses {
  /**
   * @param {() => number|null} port  the bound TCP port, null for ipc:// and inproc://
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} clock
   */
  constructor (port, clock) {
    this.port = port
    this.clock = clock
    this.seen = new Set()
    this.pending = []
    this.timer = null
    this.lastLook = -Infinity
    this.closed = false
  }

  /** The table as it is before any refusal: connections already closing are not attributed. */
  async start () {
    const port = this.port()
    if (port !== null) await closedSince(port, this.seen)
  }

  /** @param {(address: string|null) => void} report */
  note (report) {
    if (this.closed) return
    if (this.pending.length >= 1024) { report(null); return } // a flood: counted at once, without its address
    this.pending.push(report)
    if (this.timer !== null) return
    const wait = Math.max(SETTLE_MS, this.lastLook + MIN_GAP_MS - this.clock.now())
    this.timer = this.clock.setTimeout(() => { this.look().catch(() => {}) }, wait)
  }

  async look () {
    this.lastLook = this.clock.now()
    const port = this.port()
    const hosts = port === null ? [] : await closedSince(port, this.seen)
    this.timer = null
    if (this.closed) return
    const address = hosts.length === 0 || hosts.length > MAX_HOSTS ? null : hosts.join(', ')
    for (const report of this.pending.splice(0)) report(address)
  }

  close () {
    this.closed = true
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timer = null
    this.pending = []
  }
}
