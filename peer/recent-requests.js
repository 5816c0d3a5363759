// Requests this peer ran recently, per client connection and request id, so a request
// delivered twice (a client's retry that comes back to this peer, a hedge) runs once: a
// duplicate of a running request is dropped (the first one's reply answers it), a duplicate
// of a finished one gets the same reply again.
//
// Each connection (connections.js) has its own maps keyed by the numeric request id (no key
// strings to build and hash per request), looked up once per frame. Replies are remembered packed, copied into
// the generation's ReplyArena (a number per reply, no object), and sent again as they are.
// Memory is kept in two generations, swapped every half window, or when the peer as a whole
// has remembered `max / 2` requests or `maxBytes / 2` bytes of replies in the newer one, so
// remembering costs O(1) and never iterates over requests: an id is remembered for between
// half a window and a whole one, less under load.
// A connection is caught up with the generation when it is next used; the memory of one not
// used for two generations is let go (and the connection forgotten when it holds nothing else). Large replies (over 16 KiB, bulk ones included) go to a
// ReplyRing of their own instead (reply-ring.js), at a negative handle; written over, they are
// forgotten sooner than the generations forget.

import { ReplyArena, LARGE } from './reply-arena.js'
import { ReplyRing } from './reply-ring.js'

const EMPTY = new Map()
const NO_ARENA = new ReplyArena()

/**
 * What the memories of all connections share: the current generation (its number, the arena
 * of its replies, and how many requests and bytes of replies it holds against its limits),
 * and the ring of large replies.
 */
class Generations {
  constructor (max, maxBytes) {
    this.maxPerGeneration = Math.max(1, Math.floor(max / 2))
    this.maxBytesPerGeneration = Math.max(1, Math.floor(maxBytes / 2))
    this.generation = 0
    this.count = 0 // requests remembered in the current generation, all connections together
    this.bytes = 0 // bytes of replies remembered in the current generation
    this.arena = new ReplyArena() // the replies of the current generation
    // Large replies, of all generations, in a quarter of maxBytes: a peer with 24 MB of state
    // that kept 16 MiB of them ran a full collection every 30-90 ms, with 4 MiB one in all.
    this.ring = new ReplyRing(Math.floor(maxBytes / 4))
    this.ringMark = 0 // ring.written at the last rotation
  }

  /** Whether the current generation holds as many requests, or bytes of replies, as it may. */
  get full () {
    return this.count >= this.maxPerGeneration || this.bytes >= this.maxBytesPerGeneration
  }

  /** A new generation; the ring's memory goes back when no large reply came in the last one. */
  next () {
    this.generation++
    this.count = 0
    this.bytes = 0
    this.arena = new ReplyArena()
    if (this.ring.written === this.ringMark) this.ring.release()
    this.ringMark = this.ring.written
  }
}

export class RecentRequests {
  /**
   * @param {object} o
   * @param {number} [o.windowMs]  an id is remembered between half of this and all of it
   * @param {number} [o.max]       requests remembered at most, all connections together
   * @param {number} [o.maxBytes]  bytes of replies remembered at most
   * @param {{ now(): number }} o.clock
   * @param {import('./connections.js').ConnectionTable} o.connections  whose memories these are
   */
  constructor ({ windowMs = 10000, max = 20000, maxBytes = 16 * 1024 * 1024, clock, connections }) {
    this.half = windowMs / 2
    this.clock = clock
    this.since = clock.now()
    this.connections = connections
    this.gens = new Generations(max, maxBytes)
    this.rotateNow = () => this.rotate() // a connection's memory rotates when the generation is full
  }

  /** The current generation's number (for tests). */
  get generation () {
    return this.gens.generation
  }

  /** The ring of large replies (for tests). */
  get ring () {
    return this.gens.ring
  }

  /** The memory of connection `conn` (connections.js), caught up with the generation. */
  of (conn, now = this.clock.now()) {
    // Made before a rotation can sweep the table: a connection new in this frame holds it.
    const c = conn.requests ?? (conn.requests = new ClientRequests(this.gens, this.rotateNow))
    if (now - this.since >= this.half) this.rotate()
    c.catchUp()
    return c
  }

  /** Whether connection `conn` has a request `id` running or remembered (a stream may not take its id: PROTOCOL.md 4.10). */
  knows (conn, id) {
    return conn.requests !== null && this.of(conn).knows(id)
  }

  /** A new generation: the memories of connections not used for two generations are let go, and connections that hold nothing are forgotten. */
  rotate () {
    this.gens.next()
    this.since = this.clock.now()
    const generation = this.gens.generation
    for (const conn of this.connections.values()) {
      const c = conn.requests
      if (c !== null && c.generation < generation - 1 && (c.running === null || c.running.size === 0)) conn.requests = null
    }
    this.connections.sweep()
  }

  /** Requests remembered, all connections together (for tests and stats). */
  get size () {
    const generation = this.gens.generation
    let n = 0
    for (const conn of this.connections.values()) {
      const c = conn.requests
      if (c === null) continue
      if (c.generation === generation) n += c.current.size + c.previous.size
      else if (c.generation === generation - 1) n += c.current.size // its current is the previous now
    }
    return n
  }
}

/** The recent requests of one client connection, and the ones still running (to cancel). */
export class ClientRequests {
  /**
   * @param {Generations} gens  what all connections share
   * @param {() => void} rotate  starts a new generation for all (this one is full)
   */
  constructor (gens, rotate) {
    this.gens = gens
    this.rotate = rotate
    this.generation = gens.generation
    this.current = new Map() // id -> the reply's handle in currentArena, or null while running
    this.previous = EMPTY
    this.currentArena = gens.arena
    this.previousArena = NO_ARENA
    this.running = null //      id -> RequestContext of async requests (the dispatcher's IdTable)
  }

  catchUp () {
    const g = this.gens.generation
    if (this.generation === g) return
    this.previous = this.generation === g - 1 ? this.current : EMPTY
    this.previousArena = this.generation === g - 1 ? this.currentArena : NO_ARENA
    this.current = new Map()
    this.currentArena = this.gens.arena
    this.generation = g
  }

  /**
   * 'new' (run it), 'running' (drop it) or the reply to send again (packed bytes, or a
   * BulkReply). A large reply the ring wrote over is forgotten: the request runs again.
   */
  begin (id) {
    let seen = this.current.get(id)
    if (seen !== undefined) {
      if (seen === null) return 'running'
      const reply = this.read(seen, this.currentArena)
      if (reply !== null) return reply
      this.current.delete(id)
    } else if ((seen = this.previous.get(id)) !== undefined) {
      if (seen === null) return 'running'
      const reply = this.read(seen, this.previousArena)
      if (reply !== null) return reply
      this.previous.delete(id)
    }
    if (this.gens.full) { this.rotate(); this.catchUp() }
    this.gens.count++
    this.current.set(id, null)
    return 'new'
  }

  /** Whether request `id` is running or remembered on this connection. */
  knows (id) {
    return this.current.has(id) || this.previous.has(id)
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
    if (arena.bytes + reply.length > this.gens.maxBytesPerGeneration) { map.delete(id); return }
    const ring = this.gens.ring
    if ((reply.length > LARGE || !(reply instanceof Uint8Array)) && ring.fits(reply.length)) {
      arena.bytes += reply.length
      map.set(id, -1 - ring.append(reply))
    } else {
      map.set(id, arena.append(reply))
    }
    this.gens.bytes += reply.length
  }

  /** The reply at `handle` (a position in the ring when negative), or null if the ring wrote over it. */
  read (handle, arena) {
    return typeof handle === 'number' && handle < 0 ? this.gens.ring.read(-1 - handle) : arena.read(handle)
  }
}
