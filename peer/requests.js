// Requests as a kind of work the intake takes (intake.js): what differs for a REQUEST entry
// (PROTOCOL.md 4.1). It is remembered for duplicates, runs its method's handler (service.js)
// through the dispatcher (dispatch.js execute()), and is answered by a REPLY entry, a large
// binary result in a bulk frame when the request accepts one (4.2.1).
import { MessageType } from '../protocol/constants.js'

export class PeerRequests {
  /**
   * @param {object} o
   * @param {import('./dispatch.js').Dispatcher} o.dispatcher  runs admitted work and counts outcomes
   * @param {{ handler(method: string): Function|undefined, unknown(method: string): object }} o.service  what this peer serves (service.js)
   * @param {{ answer(conn, entry, bulk?: boolean): unknown }} o.replies  the reply outbox
   * @param {{ duplicates: number }} o.counts  the peer's counters (duplicates)
   * @param {() => ({ observe(ms: number): void }|null)} o.latency  the histogram of requests' time from arrival to reply, once metrics are on
   * @param {{ now(): number }} o.clock
   * @param {((req: object, entry: Array, arrived: number) => void)|null} [o.debug]  told of every answer, at --log-level debug only
   */
  constructor (o) {
    this.dispatcher = o.dispatcher
    this.service = o.service
    this.replies = o.replies
    this.counts = o.counts
    this.latency = o.latency
    this.clock = o.clock
    this.debug = o.debug ?? null
    this.remembers = true
    this.batched = true
    this.streamed = false
  }

  /** Its part of the socket's message table (core.js): REQUEST enters by the one intake (intake.js). */
  routes (intake) {
    return { [MessageType.REQUEST]: (conn, msg, frame) => intake.take(conn, this, msg.requests, msg.invalid, frame.length) }
  }

  remembered () {
    return true
  }

  received () {}

  duplicate () {
    this.counts.duplicates++
  }

  invalid (conn, bad) {
    this.dispatcher.invalid(bad, (entry) => { this.replies.answer(conn, entry) })
  }

  clash (conn, req) {
    this.invalid(conn, { id: req.id, reason: `request id ${req.id} is an open stream's on this connection (stream and request ids are shared)` })
  }

  handlerOf (req) {
    return this.service.handler(req.method)
  }

  unknown (req) {
    return this.service.unknown(req.method)
  }

  bytes (req, share) {
    return share
  }

  refuse (conn, req, refusal) {
    const entry = this.dispatcher.refusal(req.id, req.method, refusal)
    this.replies.answer(conn, entry)
    this.latency()?.observe(0)
    if (this.debug !== null) this.debug(req, entry, this.clock.now())
  }

  run (conn, req, fn, flow, now, bytes, reply) {
    const scope = conn.requests // its connection's running requests, to cancel (recent-requests.js)
    const latency = this.latency()
    const debug = this.debug
    const answer = latency === null && debug === null
      ? reply
      : (entry) => {
          reply(entry)
          if (entry === null) return
          if (latency !== null) latency.observe(this.clock.now() - now)
          if (debug !== null) debug(req, entry, now)
        }
    this.dispatcher.execute(req, fn, answer, scope, now, bytes, this.dispatcher.counted(req.method), 'request', flow)
  }

  send (conn, req, entry) {
    return this.replies.answer(conn, entry, req.bulk)
  }
}
