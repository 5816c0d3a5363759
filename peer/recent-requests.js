// Requests this peer ran recently, per client connection and request id, so a request
// delivered twice (a client's retry that comes back to this peer, a hedge) runs once: a
// duplicate of a running request is dropped (the first one's reply answers it), a duplicate
// of a finished one gets the same reply again.
//
// Each connection has its own maps keyed by the numeric request id (no key strings to build
// and hash per request), looked up once per frame. Replies are remembered packed, copied into
// the generation's ReplyArena (a number per reply, no object), and sent again as they are.
// Memory is kept in two generations, swapped every half window, or when the peer as a whole
// has remembered `max / 2` requests or `maxBytes / 2` bytes of replies in the newer one, so
// remembering costs O(1) and never iterates over requests: an id is remembered for between
// half a window and a whole one, less under load.
// A connection is caught up with the generation when it is next used; connections not used
// for two generations are forgotten.

import { ReplyArena } from './reply-arena.js'

const EMPTY = new Map()
const NO_ARENA = new ReplyArena()

export class RecentRequests {
  constructor ({ windowMs = 10000, max = 20000, maxBytes = 16 * 1024 * 1024, clock }) {
    this.half = windowMs / 2
    this.maxPerGeneration = Math.max(1, Math.floor(max / 2))
    this.maxBytesPerGeneration = Math.max(1, Math.floor(maxBytes / 2))
    this.bytes = 0 // bytes of replies remembered in the current generation
    this.clock = clock
    this.generation = 0
    this.count = 0 // requests remembered in the current generation, all connections together
    this.since = clock.now()
    this.clients = new Map() // connection key -> ClientRequests
    this.arena = new ReplyArena() // the replies of the current generation
  }

  /** The memory of one connection; `client` is its key (a number or a string, see peer.js). */
  of (client, now = this.clock.now()) {
    if (now - this.since >= this.half) this.rotate()
    let c = this.clients.get(client)
    if (c === undefined) this.clients.set(client, c = new ClientRequests(this))
    else c.catchUp()
    return c
  }

  rotate () {
    this.generation++
    this.count = 0
    this.bytes = 0
    this.arena = new ReplyArena()
    this.since = this.clock.now()
    for (const [key, c] of this.clients) {
      if (c.generation < this.generation - 1 && (c.running === null || c.running.size === 0)) this.clients.delete(key)
    }
  }

  /** Requests remembered, all connections together (for tests and stats). */
  get size () {
    let n = 0
    for (const c of this.clients.values()) {
      if (c.generation === this.generation) n += c.current.size + c.previous.size
      else if (c.generation === this.generation - 1) n += c.current.size // its current is the previous now
    }
    return n
  }
}

/** The recent requests of one client connection, and the ones still running (to cancel). */
export class ClientRequests {
  constructor (owner) {
    this.owner = owner
    this.generation = owner.generation
    this.current = new Map() // id -> the reply's handle in currentArena, or null while running
    this.previous = EMPTY
    this.currentArena = owner.arena
    this.previousArena = NO_ARENA
    this.running = null //      id -> RequestContext of async requests (the dispatcher's IdTable)
  }

  catchUp () {
    const g = this.owner.generation
    if (this.generation === g) return
    this.previous = this.generation === g - 1 ? this.current : EMPTY
    this.previousArena = this.generation === g - 1 ? this.currentArena : NO_ARENA
    this.current = new Map()
    this.currentArena = this.owner.arena
    this.generation = g
  }

  /** 'new' (run it), 'running' (drop it) or the packed reply to send again. */
  begin (id) {
    let seen = this.current.get(id)
    if (seen !== undefined) return seen === null ? 'running' : this.currentArena.read(seen)
    seen = this.previous.get(id)
    if (seen !== undefined) return seen === null ? 'running' : this.previousArena.read(seen)
    const owner = this.owner
    if (owner.count >= owner.maxPerGeneration || owner.bytes >= owner.maxBytesPerGeneration) { owner.rotate(); this.catchUp() }
    owner.count++
    this.current.set(id, null)
    return 'new'
  }

  /** Forgets a request (it was refused, so it may legitimately come back). */
  forget (id) {
    this.current.delete(id)
    if (this.previous !== EMPTY) this.previous.delete(id)
  }

  /**
   * The request ran: `reply` (its packed reply, bytes) is what a duplicate gets. A generation
   * keeps at most half of `maxBytes` of replies: requests that all arrived before any
   * finished (a burst of large ones) would otherwise all be kept. A reply past that is not
   * kept and its id is forgotten, as a rotation under load forgets ids: a duplicate runs again.
   */
  finish (id, reply) {
    const map = this.current.has(id) ? this.current : this.previous.has(id) ? this.previous : null
    if (map === null) return
    const arena = map === this.current ? this.currentArena : this.previousArena
    if (arena.bytes + reply.length > this.owner.maxBytesPerGeneration) { map.delete(id); return }
    map.set(id, arena.append(reply))
    this.owner.bytes += reply.length
  }
}
