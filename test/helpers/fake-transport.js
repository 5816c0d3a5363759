// An in-memory stand-in for the client's ZeroMQ transport, driven by a fake clock: each
// fake peer has a behaviour that decides what happens to every request sent to it.
import { encodeReply, decode, Status, MessageType } from '../../protocol/index.js'
import { encodeError, encodeService, encodePong } from '../../protocol/codec.js'
import { ProtocolErrorCode } from '../../protocol/constants.js'
import { describe as describeService } from '../../protocol/service.js'

export class FakeNetwork {
  constructor (clock) {
    this.clock = clock
    this.peers = new Map() // endpoint -> { up, behave, latency, got: [] }
    this.transport = null
    this.log = [] // [endpoint, method, id] per request that reached a peer
    this.cancels = [] // [endpoint, ...ids] per CANCEL sent
    this.frames = 0 //   REQUEST frames received
    this.frameSizes = [] // requests in each REQUEST frame, in order
    this.dials = [] //   endpoints connect() was called with, in order
    this.hangups = [] // endpoints disconnect() was called with, in order
  }

  /** A `transport` option for Client: { connector }. */
  clientTransport () {
    return {
      connector: (handlers) => {
        this.h = handlers
        this.transport = {
          connect: (ep) => { this.dials.push(ep); if (!this.peers.has(ep)) this.define(ep) },
          disconnect: (ep) => { this.hangups.push(ep) },
          send: (ep, frames, done) => this.send(ep, frames, done),
          close: async () => {},
        }
        return this.transport
      },
    }
  }

  /**
   * `service` is what the peer says it serves ({ methods, version?, labels?, capacity? }); left
   * out, it answers the question as a peer older than services does (ERROR "unknown type"),
   * and so may serve anything.
   * behave(request) returns one of: ['ok', value], ['busy'], ['draining'], ['remote', msg, code], ['unknown'],
   * ['silent'] (never answers), ['unreachable'] (the send fails with EHOSTUNREACH). With
   * `batched`, the answers to one request frame come back together in one reply frame, as a
   * real peer's do; without it, each in a frame of its own.
   */
  define (ep, { behave = (r) => ['ok', r.args], latency = 1, batched = false, service = null, serviceLatency = 0 } = {}) {
    const p = { up: false, behave, latency, batched, service: null, serviceLatency, asked: 0, answers: [] }
    if (service !== null) this.serve(ep, service, p)
    this.peers.set(ep, p)
    return p
  }

  /** What `ep` says it serves from now on (the next question gets it). */
  serve (ep, service, p = this.peers.get(ep)) {
    p.service = describeService({ version: null, labels: {}, capacity: null, ...service })
  }

  /**
   * The connection to `ep` comes up. With serviceLatency 0 (the default) the peer's answer to
   * the client's question of what it serves is in before up() returns, so a test can send
   * requests at once; otherwise it comes serviceLatency ms later.
   */
  up (ep) {
    const p = this.peers.get(ep)
    p.up = true
    this.h.onUp(ep)
    const answers = p.answers
    p.answers = []
    for (const a of answers) this.h.onMessage(ep, [a])
  }
  down (ep) { this.peers.get(ep).up = false; this.h.onDown(ep) }

  send (ep, frames, done) {
    const p = this.peers.get(ep)
    const msg = decode(frames[0])
    if (msg.type === MessageType.CANCEL) { this.cancels.push([ep, ...msg.ids]); queueMicrotask(() => done(null)); return }
    if (msg.type === MessageType.PING) {
      queueMicrotask(() => done(null))
      p.pinged = (p.pinged ?? 0) + 1
      if (p.silentToPings) return
      const pong = encodePong(msg.seq, { mv: 0, inc: p.incarnation ?? 1, st: p.leaving ? 3 : 0 })
      this.clock.setTimeout(() => { if (p.up) this.h.onMessage(ep, [pong]) }, p.latency)
      return
    }
    if (msg.type === MessageType.SERVICE_GET) {
      queueMicrotask(() => done(null))
      p.asked++
      const answer = p.service === null ? encodeError(ProtocolErrorCode.UNKNOWN_TYPE, 'unknown message type 15') : encodeService(msg.seq, p.service)
      if (p.serviceLatency === 0) p.answers.push(answer)
      else this.clock.setTimeout(() => { if (p.up) this.h.onMessage(ep, [answer]) }, p.serviceLatency)
      if (p.serviceLatency === 0) queueMicrotask(() => { if (p.answers.length > 0 && p.up) { const list = p.answers; p.answers = []; for (const a of list) this.h.onMessage(ep, [a]) } })
      return
    }
    // A frame may carry several requests (coalescing): each gets its peer's behaviour.
    this.frames++
    this.frameSizes.push(msg.requests.length)
    const outcomes = msg.requests.map((req) => [req, p.up ? p.behave(req) : ['unreachable']])
    if (outcomes.some(([, o]) => o[0] === 'unreachable')) { queueMicrotask(() => done('EHOSTUNREACH')); return }
    queueMicrotask(() => done(null))
    const entries = []
    for (const [req, outcome] of outcomes) {
      this.log.push([ep, req.method, req.id])
      if (outcome[0] === 'silent') continue
      entries.push(outcome[0] === 'ok'
        ? [req.id, Status.OK, outcome[1]]
        : outcome[0] === 'remote'
          ? [req.id, Status.REMOTE, [outcome[1], outcome[2] ?? null]]
          : outcome[0] === 'unknown'
            ? [req.id, Status.UNKNOWN_METHOD, [`unknown method "${req.method}"`, null]]
            : [req.id, outcome[0] === 'busy' ? Status.BUSY : Status.DRAINING, [outcome[0], null]])
    }
    const replies = p.batched ? (entries.length > 0 ? [entries] : []) : entries.map((entry) => [entry])
    for (const list of replies) {
      this.clock.setTimeout(() => { if (p.up) this.h.onMessage(ep, [encodeReply({}, list)]) }, p.latency)
    }
  }
}
