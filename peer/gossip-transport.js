// A peer's outgoing membership traffic: requests (probe, probe-req, sync) sent on a
// connecting socket (a transport connector) to other peers by endpoint, and answers matched
// by sequence number *and* by the connection they came on, so only the member asked can
// answer (membership counts such answers as vouched). Answers to requests *from* other peers
// go out on the bound socket. A dropped connection is reported so the member is probed at once.
// An answer that comes after its request timed out is still news from the member asked (a
// stalled connection delivers them all at once when it recovers, a refutation among them):
// its claims go to `onLate`, if it comes on the connection the request went to.
// Connections are bounded (`maxConnections`): those membership keeps (its subjects, overlay.js)
// stay; any other, opened for a verification, an indirect probe or a push-pull, is closed when
// it has been idle for `idleMs`, or at once, least recently used first, when the bound is passed.
import { encodeGossip, decode } from '../protocol/codec.js'
import { isWireEndpoint } from '../protocol/endpoint.js'
import { queueLimit } from '../transport/settings.js'
import { Questions, Answer } from '../transport/questions.js'
import { membershipDefaults } from './membership/config.js'

const LATE_MEMORY = 1024 // requests that timed out, remembered so their late answers still count

/**
 * Answers a membership request that came in on the bound socket (`msg`, decoded): `send(frame,
 * answer)` with membership's answer, when it has one; `onError(err)` if handling it failed.
 */
export function answerGossip (membership, msg, send, onError) {
  membership.handle(msg.gossip).then((answer) => {
    if (answer !== null) send(encodeGossip(msg.seq, answer), answer)
  }, onError)
}

export class GossipTransport {
  /**
   * @param {object} o
   * @param {object} o.limits   decode limits (maxMessageSize, maxBatch, ...)
   * @param {number} o.heartbeatInterval
   * @param {number} o.heartbeatTimeout
   * @param {(handlers: object) => object} o.connector  makes the connecting socket (transport/)
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {(endpoint: string) => void} o.onDisconnect
   * @param {((endpoint: string) => boolean)|null} [o.accept]  endpoints this socket may connect to (a plain peer: loopback only)
   * @param {(endpoint: string, answer: object) => void} [o.onLate]  an answer after its timeout
   * @param {object|null} [o.credentials]  CURVE keys of a secured peer (the cluster's, both ways)
   * @param {((frame: Buffer) => Buffer)|null} [o.seal]  wraps a request for a secured cluster
   * @param {(endpoint: string, refusal: { kind: string, code: string|null }) => void} [o.onRefused]
   *   a handshake with a member or seed failed
   * @param {number} [o.maxConnections]  connections held at once, at most (membership/config.js)
   * @param {number} [o.idleMs]          an unkept connection unused this long is closed (0: never)
   */
  constructor (o) {
    this.o = o
    this.counts = { sent: 0, bytes: 0, malformed: 0, refusedEndpoints: 0, offLoopback: 0, strayAnswers: 0, lateAnswers: 0, handshakeFailures: 0, opened: 0, closedIdle: 0, closedOverBound: 0 }
    this.maxConnections = o.maxConnections ?? membershipDefaults.maxConnections
    this.idleMs = o.idleMs ?? membershipDefaults.connectionIdleMs
    this.held = new Map() // endpoint -> when last used, least recently used first
    this.kept = new Set() // endpoints membership keeps connected (its subjects)
    this.sweeper = null
    this.seal = o.seal ?? null
    this.closed = false
    // This socket connects to candidates too, endpoints anyone may have named: its inbound
    // queues are bounded, and it pings only if the operator turned pings on (peer/options.js).
    this.link = o.connector({
      maxMessageSize: o.limits.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval,
      heartbeatTimeout: o.heartbeatTimeout,
      sendHighWaterMark: 1000,
      receiveHighWaterMark: queueLimit(o.limits.maxMessageSize),
      onMessage: (endpoint, frames) => this.onAnswer(endpoint, frames),
      onDown: (endpoint) => o.onDisconnect(endpoint),
      credentials: o.credentials ?? null,
      // A member that cannot prove it holds the cluster key never answers: membership sees
      // it as unreachable. Counted here, and reported to the peer.
      onRefused: (endpoint, refusal) => { this.counts.handshakeFailures++; o.onRefused?.(endpoint, refusal) },
    })
    this.questions = new Questions({ send: (ep, frames, done) => this.link.send(ep, frames, done), clock: o.clock, lateMemory: LATE_MEMORY })
  }

  /** Sends a membership request; resolves with the answer from `endpoint`, or null after `timeoutMs`. */
  request (endpoint, msg, timeoutMs) {
    if (this.closed) return Promise.resolve(null)
    // Membership only hands over endpoints that passed the codec's check; this is the last
    // guard before ZeroMQ, which throws on some malformed endpoints.
    if (this.o.accept != null && !this.o.accept(endpoint)) { // a plain peer stays on loopback
      this.counts.offLoopback++
      return Promise.resolve(null)
    }
    if (!isWireEndpoint(endpoint) || !this.link.connect(endpoint)) {
      this.counts.refusedEndpoints++
      return Promise.resolve(null)
    }
    this.use(endpoint)
    this.counts.sent++
    return new Promise((resolve) => this.questions.ask(endpoint, (seq) => this.frameOf(seq, msg), timeoutMs, resolve))
  }

  frameOf (seq, msg) {
    const frame = this.seal === null ? encodeGossip(seq, msg) : this.seal(encodeGossip(seq, msg))
    this.counts.bytes += frame.length
    return frame
  }

  /** Stops connecting to a member that is dead, left or never answered; a later request reconnects. */
  forget (endpoint) {
    this.held.delete(endpoint)
    this.link.disconnect(endpoint)
  }

  /** The connections membership wants kept (its subjects); the others may be closed. */
  keep (endpoints) {
    this.kept = new Set(endpoints)
    this.trim()
  }

  /** Endpoints connected now, most recently used last. */
  connected () {
    return [...this.held.keys()]
  }

  /** `endpoint` was just used: most recently used, and counted when new. */
  use (endpoint) {
    const known = this.held.delete(endpoint)
    this.held.set(endpoint, this.o.clock.now())
    if (known) return
    this.counts.opened++
    this.trim()
    if (this.sweeper === null && this.idleMs > 0) this.sweep()
  }

  /** Over the bound: closes the least recently used connections not kept and not awaited. */
  trim () {
    if (this.held.size <= this.maxConnections) return
    for (const ep of [...this.held.keys()]) {
      if (this.held.size <= this.maxConnections) break
      if (this.kept.has(ep) || this.questions.asking(ep)) continue
      this.counts.closedOverBound++
      this.forget(ep)
    }
  }

  /** Every idleMs: connections not kept and unused for idleMs are closed. */
  sweep () {
    this.sweeper = this.o.clock.setTimeout(() => {
      this.sweeper = null
      if (this.closed) return
      const old = this.o.clock.now() - this.idleMs
      for (const [ep, at] of [...this.held]) {
        if (at > old) break // least recently used first: the rest are younger
        if (this.kept.has(ep) || this.questions.asking(ep)) continue
        this.counts.closedIdle++
        this.forget(ep)
      }
      if (this.held.size > this.kept.size) this.sweep()
    }, this.idleMs)
    this.sweeper?.unref?.()
  }

  onAnswer (endpoint, frames) {
    if (frames.length !== 1) { this.counts.malformed++; return }
    let m
    try { m = decode(frames[0], this.o.limits) } catch { this.counts.malformed++; return }
    if (m.gossip === undefined) { this.counts.malformed++; return }
    const taken = this.questions.answer(endpoint, m.seq, m.gossip)
    if (taken === Answer.STRAY) this.counts.strayAnswers++
    else if (taken === Answer.LATE) { // it timed out, but what it says is still news from that member
      this.counts.lateAnswers++
      this.o.onLate?.(endpoint, m.gossip)
    }
  }

  async close () {
    this.closed = true
    if (this.sweeper !== null) this.o.clock.clearTimeout(this.sweeper)
    this.questions.stop()
    await this.link.close()
  }
}
