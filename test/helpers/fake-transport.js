// Scripted peers on the in-memory transport (transport/memory.js), for the client's logic
// tests: each fake peer is a listener on a host of its own whose behaviour decides what
// happens to every request sent to it; the client's connector is the real in-memory one, on
// the test's virtual clock. The test decides when a connection is up (up) or breaks (down).
import { MemoryNetwork } from '../../transport/memory.js'
import { encodeReply, decode, Status, MessageType } from '../../protocol/index.js'
import { encodeError, encodeService, encodePong } from '../../protocol/codec.js'
import { encodeStreamItems, encodeStreamEnd } from '../../protocol/stream-codec.js'
import { ProtocolErrorCode, Feature } from '../../protocol/constants.js'
import { describe as describeService } from '../../protocol/service.js'

const CLIENT = 'client' // the client's host

export class FakeNetwork {
  /** @param {import('../../testing/virtual-clock.js').VirtualClock} clock */
  constructor (clock) {
    this.clock = clock
    // No delay on the wire: a fake peer's `latency` is all the time a reply takes.
    this.net = new MemoryNetwork({ clock, random: () => 0.5, delay: 0 })
    this.me = this.net.host(CLIENT)
    this.peers = new Map() // endpoint -> { behave, latency, ... } (define)
    this.connector = null // the client's (transport/memory.js)
    this.h = null //         the handlers the client gave it
    this.log = [] // [endpoint, method, id] per request sent to an up peer (and [endpoint, method, id, 'stream'] per stream opened)
    this.cancels = [] // [endpoint, ...ids] per CANCEL that reached a peer
    this.frames = 0 //   REQUEST frames sent
    this.frameSizes = [] // requests in each REQUEST frame, in order
    this.dials = [] //   endpoints connect() was called with, in order
    this.hangups = [] // endpoints disconnect() was called with, in order
  }

  /** A `transport` option for Client: { connector }. */
  clientTransport () {
    return {
      connector: (handlers) => {
        this.h = handlers
        const c = this.connector = this.me.connector(handlers)
        const { connect, disconnect, send } = c
        c.connect = (ep) => { this.dials.push(ep); if (!this.peers.has(ep)) this.define(ep); return connect.call(c, ep) }
        c.disconnect = (ep) => { this.hangups.push(ep); disconnect.call(c, ep) }
        c.send = (ep, frames, done) => this.sent(ep, frames, done, send.bind(c))
        return c
      },
    }
  }

  /**
   * Adds a fake peer at `ep`, unreachable until up(ep). `service` is what it says it serves
   * ({ methods, version?, labels?, capacity? }); left out, it answers the question as a peer
   * older than services does (ERROR "unknown type"), and so may serve anything.
   * behave(request) returns one of: ['ok', value], ['busy'], ['draining'], ['remote', msg, code], ['unknown'],
   * ['silent'] (never answers), ['unreachable'] (the send fails with EHOSTUNREACH). A stream
   * opened (STREAM_OPEN) is decided the same way: 'ok' sends its value as one item, then the
   * end; the refusals end it with their status before any item. With
   * `batched`, the answers to one request frame come back together in one reply frame, as a
   * real peer's do; without it, each in a frame of its own.
   */
  define (ep, { behave = (r) => ['ok', r.args], latency = 1, batched = false, service = null, serviceLatency = 0 } = {}) {
    const p = { up: false, behave, latency, batched, service: null, serviceLatency, asked: 0, pinged: 0, decided: [], listener: null }
    if (service !== null) this.serve(ep, service, p)
    this.peers.get(ep)?.listener.close(true) // defined again: the new behaviour replaces the old, at once
    this.peers.set(ep, p)
    this.net.partition([CLIENT], [ep])
    const host = this.net.host(ep)
    p.listener = host.listener({ bind: ep, onMessage: (id, frames) => this.arrived(ep, p, id, frames) })
    p.listener.bind()
    return p
  }

  /** What `ep` says it serves from now on (the next question gets it). */
  serve (ep, service, p = this.peers.get(ep)) {
    p.service = describeService({ version: null, labels: {}, capacity: null, ...service })
  }

  /**
   * The connection to `ep` comes up now. With serviceLatency 0 (the default) the peer's answer
   * to the client's question of what it serves is in when up() resolves (no time passes), so a
   * test can send requests at once; otherwise it comes serviceLatency ms later.
   */
  async up (ep) {
    const p = this.peers.get(ep)
    p.up = true
    this.net.heal([CLIENT], [ep])
    this.connector.dialNow(ep)
    await this.clock.advance(0) // the question and its answer, on the wire with no delay
  }

  /** The connection to `ep` breaks now (onDown), and `ep` is unreachable until up(ep). */
  down (ep) {
    const p = this.peers.get(ep)
    p.up = false
    p.decided = []
    this.net.partition([CLIENT], [ep])
    this.connector.drop(ep)
  }

  /** What the client sends: requests are counted, and their outcomes decided, as they leave. */
  sent (ep, frames, done, send) {
    const p = this.peers.get(ep)
    const msg = p === undefined ? null : decode(frames[0])
    if (msg?.type === MessageType.REQUEST) {
      this.frames++
      this.frameSizes.push(msg.requests.length)
      const outcomes = msg.requests.map((req) => [req, p.up ? p.behave(req) : ['unreachable']])
      if (outcomes.some(([, o]) => o[0] === 'unreachable')) { queueMicrotask(() => done('EHOSTUNREACH')); return }
      for (const [req] of outcomes) this.log.push([ep, req.method, req.id])
      p.decided.push(outcomes)
    } else if (msg?.type === MessageType.STREAM_OPEN) {
      const outcome = p.up ? p.behave(msg) : ['unreachable']
      if (outcome[0] === 'unreachable') { queueMicrotask(() => done('EHOSTUNREACH')); return }
      this.log.push([ep, msg.method, msg.id, 'stream'])
      ;(p.opens ??= new Map()).set(msg.id, outcome)
    }
    send(ep, frames, done)
  }

  /** A message reached the fake peer at `ep` on the client's connection `id`. */
  arrived (ep, p, id, frames) {
    const msg = decode(frames[0])
    const answer = (frame, ms) => this.net.host(ep).clock.setTimeout(() => p.listener.send(id, [frame]), ms)
    switch (msg.type) {
      case MessageType.CANCEL:
        this.cancels.push([ep, ...msg.ids])
        return
      case MessageType.PING:
        p.pinged++
        if (!p.silentToPings) answer(encodePong(msg.seq, { mv: 0, inc: p.incarnation ?? 1, st: p.leaving ? 3 : 0 }), p.latency)
        return
      case MessageType.SERVICE_GET:
        p.asked++
        answer(p.service === null ? encodeError(ProtocolErrorCode.UNKNOWN_TYPE, 'unknown message type 15') : encodeService(msg.seq, p.service, Feature.STREAMS), p.serviceLatency)
        return
      case MessageType.STREAM_OPEN: {
        const outcome = p.opens?.get(msg.id)
        p.opens?.delete(msg.id)
        if (outcome === undefined || outcome[0] === 'silent') return
        if (outcome[0] === 'ok') {
          answer(encodeStreamItems(msg.id, [outcome[1]]), p.latency)
          answer(encodeStreamEnd(msg.id, Status.OK, null, 1), p.latency)
          return
        }
        const status = { busy: Status.BUSY, draining: Status.DRAINING, unknown: Status.UNKNOWN_METHOD, remote: Status.REMOTE }[outcome[0]]
        answer(encodeStreamEnd(msg.id, status, [outcome[1] ?? outcome[0], outcome[2] ?? null], 0), p.latency)
        return
      }
      case MessageType.REQUEST: {
        // A frame may carry several requests (coalescing): each has its outcome, decided as it left.
        const entries = []
        for (const [req, outcome] of p.decided.shift() ?? []) {
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
        for (const list of replies) answer(encodeReply({}, list), p.latency)
      }
    }
  }
}
