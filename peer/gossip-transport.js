// The peer's outgoing ZeroMQ socket for membership traffic: a ROUTER connected to other
// peers by endpoint alias, sending requests (probe, probe-req, sync) and matching answers
// by sequence number *and* by the connection they came on, so only the member asked can
// answer (membership counts such answers as vouched). Answers to requests *from* other
// peers go out on the bound socket. A dropped connection is reported so the member is
// probed at once.
import * as zmq from 'zeromq'
import { encodeGossip, decode } from '../protocol/codec.js'
import { connectingRouterOptions, Aliases, queueLimit } from '../protocol/socket-settings.js'
import { isWireEndpoint } from '../protocol/endpoint.js'

export class GossipTransport {
  /**
   * @param {object} o
   * @param {object} o.limits   decode limits (maxMessageSize, maxBatch, ...)
   * @param {number} o.heartbeatInterval
   * @param {number} o.heartbeatTimeout
   * @param {(endpoint: string) => void} o.onDisconnect
   */
  constructor (o) {
    this.o = o
    this.seq = 0
    this.pending = new Map() // seq -> { endpoint, finish(reply|null) }
    this.aliases = new Aliases()
    this.counts = { sent: 0, bytes: 0, malformed: 0, refusedEndpoints: 0, strayAnswers: 0 }
    // This socket connects to candidates too, endpoints anyone may have named: its inbound
    // queues are bounded, and it pings only if the operator turned pings on (peer/options.js).
    this.socket = new zmq.Router(connectingRouterOptions({
      ...o,
      maxMessageSize: o.limits.maxMessageSize,
      sendHighWaterMark: 1000,
      receiveHighWaterMark: queueLimit(o.limits.maxMessageSize),
    }))
    this.socket.events.on('disconnect', (e) => this.aliases.has(e.address) && o.onDisconnect(e.address))
    this.loop = this.receiveLoop()
  }

  /** Sends a membership request; resolves with the answer from `endpoint`, or null after `timeoutMs`. */
  request (endpoint, msg, timeoutMs) {
    if (this.socket.closed) return Promise.resolve(null)
    // Membership only hands over endpoints that passed the codec's check; this is the last
    // guard before ZeroMQ, which throws on some malformed endpoints.
    if (!isWireEndpoint(endpoint) || this.aliases.connect(this.socket, endpoint) === 'refused') {
      this.counts.refusedEndpoints++
      return Promise.resolve(null)
    }
    const alias = this.aliases.aliasOf(endpoint)
    const seq = this.seq = this.seq >= Number.MAX_SAFE_INTEGER ? 1 : this.seq + 1
    const frame = encodeGossip(seq, msg)
    this.counts.sent++
    this.counts.bytes += frame.length
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(null), timeoutMs)
      const finish = (reply) => {
        if (!this.pending.has(seq)) return
        this.pending.delete(seq)
        clearTimeout(timer)
        resolve(reply)
      }
      this.pending.set(seq, { endpoint, finish })
      this.socket.send([alias, frame]).catch(() => finish(null))
    })
  }

  /** Stops connecting to a member that is dead, left or never answered; a later request reconnects. */
  forget (endpoint) {
    this.aliases.disconnect(this.socket, endpoint)
  }

  async receiveLoop () {
    const s = this.socket
    try {
      for await (const msg of s) {
        if (msg.length !== 2) { this.counts.malformed++; continue }
        let m
        try { m = decode(msg[1], this.o.limits) } catch { this.counts.malformed++; continue }
        if (m.gossip === undefined) { this.counts.malformed++; continue }
        const p = this.pending.get(m.seq)
        if (p === undefined) continue // late: already timed out
        if (this.aliases.endpointOf(msg[0]) !== p.endpoint) { this.counts.strayAnswers++; continue }
        p.finish(m.gossip)
      }
    } catch (err) {
      if (!s.closed) throw err
    }
  }

  async close () {
    for (const p of [...this.pending.values()]) p.finish(null)
    if (!this.socket.closed) this.socket.close()
    await this.loop.catch(() => {})
  }
}
