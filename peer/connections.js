// What a peer knows of each client connection, in one object per connection: where its
// answers go (its routing id), the requests it sent lately and those still running
// (recent-requests.js: duplicates and cancels), its open streams (streams.js), what it proved
// of its key on a secured peer (key-proofs.js), and the flow its work is counted in when
// connections share a busy peer.
//
// A ROUTER socket never says when a connection closes, so the table forgets a connection once
// it holds nothing (sweep(): called at each rotation of the duplicates memory), and past
// MAX_CONNECTIONS it forgets the oldest idle ones first, so a flood of new connections costs
// bounded memory. Every connection closes at once when the peer binds again (clear()).

const MAX_CONNECTIONS = 65536 // connections remembered at most...
const EVICT_SCAN = 64 //         ...the oldest idle one of the first this many goes first
const ASKED_FOR_MS = 10 * 60 * 1000 // a connection that asked without proving its key counts this long (key-proofs.js)

export class Connection {
  /**
   * @param {Buffer} id        its routing id, as the socket reports it
   * @param {number|string} key  the id as one number or string (connectionKey)
   */
  constructor (id, key) {
    this.id = id
    this.key = key
    this.requests = null // ClientRequests (recent-requests.js), while it sent requests lately
    this.streams = null //  Map stream id -> PeerStream, while any is open (streams.js)
    this.flow = null //     its Flow (flows.js), made when it first asks for work: the flow its work shares a busy peer in by default
    // What it proved of its key, on a secured peer (key-proofs.js):
    this.challenge = null // the challenge its last PONG carried, not answered yet
    this.proven = null //    the client key it proved (Z85), or null
    this.cut = false //      its key was revoked: no more answers, unless it proves an allowed key or seals
    this.member = false //   it sent a good seal: a member's connection, never cut
    this.seen = false //     it sent something without proving a key (a revocation may cut it)
    this.askedAt = -Infinity // when it last asked for work without proving a key
  }

  /** Whether it holds nothing the peer must remember: no requests, streams or word of its key. */
  get empty () {
    return this.requests === null && this.streams === null && this.proven === null && !this.cut &&
      !this.member && !this.seen && this.challenge === null && this.askedAt === -Infinity
  }

  /** Whether work of it is under way (a running request, an open stream): it is never evicted. */
  get busy () {
    return this.streams !== null || (this.requests !== null && this.requests.running !== null && this.requests.running.size > 0)
  }

  /** Whether it asked for work without proving a key in the last ten minutes (key-proofs.js). */
  askedUnproven (now) {
    return this.proven === null && now - this.askedAt <= ASKED_FOR_MS
  }
}

export class ConnectionTable {
  /** @param {{ max?: number }} [o]  connections remembered at most (MAX_CONNECTIONS) */
  constructor ({ max = MAX_CONNECTIONS } = {}) {
    this.max = max
    this.map = new Map() // key -> Connection, oldest first
  }

  get size () {
    return this.map.size
  }

  /** The connection of routing id `id` (made on first sight). */
  of (id) {
    const key = connectionKey(id)
    let c = this.map.get(key)
    if (c === undefined) {
      if (this.map.size >= this.max) this.evict()
      this.map.set(key, c = new Connection(id, key))
    }
    return c
  }

  values () {
    return this.map.values()
  }

  /** Forgets the oldest connection with no work under way among the first EVICT_SCAN (a flood of new ones: bounded memory). */
  evict () {
    let n = 0
    for (const c of this.map.values()) {
      if (!c.busy) { this.map.delete(c.key); return }
      if (++n >= EVICT_SCAN) return
    }
  }

  /** Forgets the connections that hold nothing. */
  sweep () {
    for (const c of this.map.values()) if (c.empty) this.map.delete(c.key)
  }

  /** Every connection closed (the peer bound again): nothing known of them holds. */
  clear () {
    this.map.clear()
  }
}

/**
 * The key of a connection, from its routing id: libzmq's own ids (5 bytes, the first one 0)
 * by their number, so no string is built per frame; any other id by its latin1 string.
 * Either way one id, one key.
 */
export function connectionKey (id) {
  return id.length === 5 && id[0] === 0 ? id.readUInt32BE(1) : id.toString('latin1')
}
