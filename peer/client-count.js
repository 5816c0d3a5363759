// How many client connections a peer holds, for the `cc` of its answers to questions (PONG,
// PROTOCOL.md 4.4): connections heard from in the last WINDOW_MS that sent anything but
// membership requests. A connected client sends at least a heartbeat a second, so its
// connection stays counted while it lasts; one gone drops out within the window. Clients
// that connect to a subset of the peers compare these counts and move off crowded peers
// (client/rebalance.js). A ROUTER socket never says when a connection closes, and the
// connection table forgets idle ones, so this keeps its own light record: when each
// connection was last heard from.
const WINDOW_MS = 3000
const MAX_TRACKED = 65536 // connections tracked at most: a flood of new ones costs bounded memory

export class ClientCount {
  constructor () {
    this.heardAt = new Map() // connection key -> when it last sent something (ms)
  }

  /** A client message from the connection `key` at `now`. */
  heard (key, now) {
    this.heardAt.set(key, now)
    if (this.heardAt.size > MAX_TRACKED) this.prune(now)
  }

  /** Client connections heard from in the last WINDOW_MS. */
  count (now) {
    this.prune(now)
    return this.heardAt.size
  }

  prune (now) {
    for (const [key, at] of this.heardAt) if (now - at > WINDOW_MS) this.heardAt.delete(key)
    // Still over the bound (a flood within the window): the oldest go first.
    for (const key of this.heardAt.keys()) {
      if (this.heardAt.size <= MAX_TRACKED) break
      this.heardAt.delete(key)
    }
  }

  /** Every connection was closed (the peer bound again). */
  clear () {
    this.heardAt.clear()
  }
}
