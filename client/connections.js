// What a connection's events do to the client's view of a peer: a peer dialled and added to
// the table, or removed; its connection up, down, or refused at the handshake; what it said it
// serves. Each changes which peers may take a request, so each ends in routesChanged() or a
// failover of the calls on that peer.
import { ANY } from './services.js'
import { handshakeRefusal, allRefused, refusalError } from './refusals.js'
import { Feature } from '../protocol/constants.js'
import { isLoopback } from '../protocol/endpoint.js'

export class Connections {
  /** @param {import('./client.js').Client} client */
  constructor (client) {
    this.c = client
  }

  /** Connects to a peer and adds it to the table; undefined when refused (off loopback for a plain client, or by ZeroMQ). */
  add (endpoint) {
    const c = this.c
    if (c.options.security === null && !isLoopback(endpoint)) { c.counts.offLoopback++; return undefined }
    if (c.transport.connect(endpoint) === false) { c.counts.peersRefused++; return undefined }
    return c.table.add(endpoint)
  }

  remove (peer) {
    const c = this.c
    c.liveness.stop(peer)
    c.attempts.failOver(peer, false)
    c.table.remove(peer)
    c.discovery.forget(peer.endpoint)
    c.questions.forget(peer.endpoint)
    c.transport.disconnect(peer.endpoint)
  }

  /** A connection is up (`reason` null), or a peer reported down answered (liveness.js, member-lists.js). */
  up (endpoint, reason = null) {
    const c = this.c
    const peer = c.table.get(endpoint)
    if (peer === undefined) return
    peer.connected = true
    peer.refusal = null
    peer.handshakeFailures = 0
    peer.listedGone = false
    peer.failures = 0
    if (reason === null) {
      c.capacity.reset(peer) // a (re)connection: what it said of its load is stale
      c.services.ask(endpoint) // ...it may serve something else now
      c.prover?.prove(endpoint) // ...and does not know this client's key yet
    }
    c.table.setState(peer, 'up', reason)
    if (c.options.discover) c.discovery.peerUp(endpoint)
    c.routesChanged()
  }

  down (endpoint, reason) {
    const c = this.c
    const peer = c.table.get(endpoint)
    if (peer === undefined) return
    peer.connected = false
    c.questions.forget(endpoint)
    c.ejector.reset(peer)
    c.table.setState(peer, 'down', reason)
    if (peer.gone) return this.remove(peer)
    c.attempts.failOver(peer, false)
    c.liveness.checkDown(peer) // a late event of an old connection may have said so
  }

  /** A handshake with `endpoint` failed: once every known peer has refused, waiting requests fail (refusals.js). */
  refused (endpoint, failure) {
    const c = this.c
    const peer = c.table.get(endpoint)
    if (peer === undefined) return
    const refusal = handshakeRefusal(peer, failure, c.options.security)
    if (refusal === null) return
    peer.refusal = refusal
    c.options.logger.warn({ peer: endpoint, kind: failure.kind, code: failure.code }, `handshake refused: ${refusal.message.replace(/^zeromesh: /, '')}`)
    peer.lastError = refusal.message
    if (allRefused(c.table)) {
      const err = refusalError(c.table)
      const parked = [...c.parked]
      c.parked.clear()
      for (const call of parked) c.settle(call, err)
      c.streams.routesChanged() // streams waiting for a peer fail the same way (call-path.js)
    }
  }

  /** `endpoint` said what it serves (a descriptor, or ANY for an older peer), and what it can do (`features`). */
  served (endpoint, d, features = 0) {
    const c = this.c
    const peer = c.table.get(endpoint)
    if (peer === undefined || c.closing !== null) return
    peer.service = d
    peer.streams = (features & Feature.STREAMS) !== 0
    peer.notServed = null
    if (d !== ANY) peer.hint = d.digest
    c.router.changed()
    c.routesChanged()
  }

  /**
   * A connected peer did not answer what it serves within membersTimeout: it may be one that
   * predates the question and drops frames it does not know (PROTOCOL.md asks for an ERROR,
   * not every implementation sends one). It is taken to serve anything, as an older peer is;
   * an UNKNOWN_METHOD answer, a new claim or a reconnection makes the client ask again.
   */
  noServiceAnswer (endpoint) {
    const peer = this.c.table.get(endpoint)
    if (peer === undefined || !peer.connected || peer.service !== null || this.c.closing !== null) return
    this.served(endpoint, ANY)
  }
}
