// What a connection's events do to the client's view of a peer: a peer dialled and added to
// the table, or removed; its connection up, down, or refused at the handshake; what it said it
// serves. Each changes which peers may take a request, so each ends in routesChanged() or a
// failover of the calls on that peer.
import { ANY } from './services.js'
import { handshakeRefusal, allRefused, refusalError } from './refusals.js'
import { isLoopback } from '../protocol/endpoint.js'

export class Connections {
  /**
   * @param {object} o
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {{ connect(ep): boolean|void, disconnect(ep): void }} o.transport  the client's connector
   * @param {object} o.counts         the client's counters (offLoopback, peersRefused)
   * @param {object|null|false} o.security  the client's security option (null: plain)
   * @param {boolean} o.discover
   * @param {{ warn: Function }} o.logger
   * @param {() => boolean} o.closed
   * @param {{ stop(peer): void, checkDown(peer): void }} o.liveness
   * @param {{ forget(ep): void, peerUp(ep): void }} o.discovery
   * @param {{ forget(ep): void }} o.questions
   * @param {{ ask(ep): void }} o.services
   * @param {{ prove(ep: string, done: () => void): void }|null} o.prover
   * @param {{ reset(peer): void }} o.ejector
   * @param {(peer, notTaken: boolean) => void} o.failOver  moves or ends the calls on a peer
   * @param {() => void} o.routesChanged  waiting calls look again
   * @param {(err: Error) => void} o.refusedByAll  every peer refused this client: fail what waits for one
   */
  constructor (o) {
    this.o = o
  }

  /** Connects to a peer and adds it to the table; undefined when refused (off loopback for a plain client, or by ZeroMQ). */
  add (endpoint) {
    const c = this.o
    if (c.security === null && !isLoopback(endpoint)) { c.counts.offLoopback++; return undefined }
    if (c.transport.connect(endpoint) === false) { c.counts.peersRefused++; return undefined }
    return c.table.add(endpoint)
  }

  remove (peer) {
    const c = this.o
    c.liveness.stop(peer)
    c.failOver(peer, false)
    c.table.remove(peer)
    c.discovery.forget(peer.endpoint)
    c.questions.forget(peer.endpoint)
    c.transport.disconnect(peer.endpoint)
  }

  /** A connection is up (`reason` null), or a peer reported down answered (liveness.js, member-lists.js). */
  up (endpoint, reason = null) {
    const c = this.o
    const peer = c.table.get(endpoint)
    if (peer === undefined) return
    peer.connected = true
    peer.refusal = null
    peer.handshakeFailures = 0
    peer.listedGone = false
    peer.failures = 0
    if (reason === null) {
      peer.busy = false // a (re)connection: what it said of its load is stale (capacity.js)
      peer.latency.fresh() // ...and its first answer says little of its latency (peak-ewma.js)
      if (c.prover !== null) {
        // ...and does not know this client's key yet: the proof goes first, and the peer is
        // up once it is on its way (key-prover.js says why).
        peer.proving = true
        c.prover.prove(endpoint, () => this.proved(peer))
        return
      }
      c.services.ask(endpoint) // ...it may serve something else now
    }
    c.table.setState(peer, 'up', reason)
    if (c.discover) c.discovery.peerUp(endpoint)
    c.routesChanged()
  }

  /** `peer`'s new connection carries this client's key proof (or needs none): it is up. */
  proved (peer) {
    const c = this.o
    if (!peer.proving || c.table.get(peer.endpoint) !== peer) return
    peer.proving = false
    if (!peer.connected) return
    c.services.ask(peer.endpoint) // it may serve something else now
    c.table.setState(peer, 'up', null)
    if (c.discover) c.discovery.peerUp(peer.endpoint)
    c.routesChanged()
  }

  down (endpoint, reason) {
    const c = this.o
    const peer = c.table.get(endpoint)
    if (peer === undefined) return
    peer.connected = false
    peer.proving = false
    c.questions.forget(endpoint)
    c.ejector.reset(peer)
    c.table.setState(peer, 'down', reason)
    if (peer.gone) return this.remove(peer)
    c.failOver(peer, false)
    c.liveness.checkDown(peer) // a late event of an old connection may have said so
  }

  /** A handshake with `endpoint` failed: once every known peer has refused, waiting requests fail (refusals.js). */
  refused (endpoint, failure) {
    const c = this.o
    const peer = c.table.get(endpoint)
    if (peer === undefined) return
    const refusal = handshakeRefusal(peer, failure, c.security)
    if (refusal === null) return
    peer.refusal = refusal
    c.logger.warn({ peer: endpoint, kind: failure.kind, code: failure.code }, `handshake refused: ${refusal.message.replace(/^zeromesh: /, '')}`)
    peer.lastError = refusal.message
    if (allRefused(c.table)) c.refusedByAll(refusalError(c.table))
  }

  /** `endpoint` said what it serves (a descriptor, or ANY for an older peer), and what it can do (`features`). */
  served (endpoint, d, features = 0) {
    const c = this.o
    const peer = c.table.get(endpoint)
    if (peer === undefined || c.closed()) return
    peer.service = d
    peer.features = features
    peer.notServed = null
    if (d !== ANY) peer.hint = d.digest
    c.table.changed()
    c.routesChanged()
  }

  /**
   * A connected peer did not answer what it serves within membersTimeout: it may be one that
   * predates the question and drops frames it does not know (PROTOCOL.md asks for an ERROR,
   * not every implementation sends one). It is taken to serve anything, as an older peer is;
   * an UNKNOWN_METHOD answer, a new claim or a reconnection makes the client ask again.
   */
  noServiceAnswer (endpoint) {
    const peer = this.o.table.get(endpoint)
    if (peer === undefined || !peer.connected || peer.service !== null || this.o.closed()) return
    this.served(endpoint, ANY)
  }
}
