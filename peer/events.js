// The events a peer receives (PROTOCOL.md 4.11): each EVENT entry runs the handler of the
// subscription it names (its event and group), or every subscription to its event on this
// peer (a broadcast: no group), through the one admission door and the one way work runs
// (dispatch.js execute(): its ctx, span, middleware), entering as every kind of work does
// (intake.js). An entry that asks for an ack gets a REPLY entry once its handlers finished (OK,
// or REMOTE with the handler's error), and is remembered as a request is, so a redelivered
// event (the publisher's retry, after a lost connection or an attempt timeout) runs once on
// this peer and gets the same ack again. An entry that asks for none is run once and
// forgotten: nothing answers it.
import { Status, MessageType } from '../protocol/constants.js'
import { ackValue } from './each-thread.js'

export class PeerEvents {
  /**
   * @param {object} o
   * @param {import('./subscriptions.js').Subscriptions} o.subscriptions  what this peer subscribes to
   * @param {import('./dispatch.js').Dispatcher} o.dispatcher  runs admitted work (execute)
   * @param {{ answer(conn, entry): unknown }} o.replies  the reply outbox
   */
  constructor (o) {
    this.o = o
    this.counts = { received: 0, handled: 0, failed: 0, unknown: 0, refused: 0, invalid: 0, duplicates: 0, unacked: 0 }
    // Received, handled and failed by event, for events this peer subscribes to only: a
    // publisher cannot add a name (an unknown event counts in `unknown`), so metric labels stay bounded.
    this.byEvent = new Map() // event -> { received, ok, errors }
    this.remembers = true // an acked event, as a request (ids are shared with requests)
    this.batched = true
    this.streamed = false
  }

  /** Its part of the socket's message table (core.js): EVENT enters by the one intake (intake.js). */
  routes (intake) {
    return { [MessageType.EVENT]: (conn, msg, frame) => intake.take(conn, this, msg.events, msg.invalid, frame.length) }
  }

  // As a kind of work the intake takes (intake.js):

  remembered (ev) {
    return ev.ack
  }

  received (ev) {
    this.counts.received++
    if (!ev.ack) this.counts.unacked++
  }

  duplicate () {
    this.counts.duplicates++
  }

  invalid (conn, bad) {
    this.counts.invalid++
    if (bad.ack) this.o.replies.answer(conn, [bad.id, Status.INVALID_REQUEST, [`invalid event: ${bad.reason}`, null]])
  }

  clash (conn, ev) {
    this.counts.invalid++
    if (ev.ack) this.o.replies.answer(conn, [ev.id, Status.INVALID_REQUEST, [`event id ${ev.id} is an open stream's on this connection (ids are shared)`, null]])
  }

  /** Not subscribed here (UNKNOWN_METHOD), naming what it subscribes to. */
  unknown (ev) {
    return { status: Status.UNKNOWN_METHOD, message: `no subscription to "${ev.event}"${ev.group === null ? '' : ` in group "${ev.group}"`}; this peer subscribes to ${this.o.subscriptions.text()}` }
  }

  bytes (ev, share) {
    return share
  }

  /** Refused (admission.js): counted `unknown` when nothing here subscribes to it (a draining peer's refusal too), else `refused`. */
  refuse (conn, ev, refusal) {
    if (this.handlerOf(ev) === undefined) this.counts.unknown++
    else this.counts.refused++
    if (ev.ack) this.o.replies.answer(conn, [ev.id, refusal.status, [refusal.message, null]])
  }

  run (conn, ev, fn, flow, now, bytes, reply) {
    let tally = this.byEvent.get(ev.event)
    if (tally === undefined) this.byEvent.set(ev.event, tally = { received: 0, ok: 0, errors: 0 })
    tally.received++
    const req = { id: ev.id, method: ev.event, args: ev.payload, timeoutMs: ev.timeoutMs, trace: ev.trace, headers: ev.headers, group: ev.group }
    this.o.dispatcher.execute(req, fn, (entry) => {
      if (entry === null) return reply(null) // cancelled by its publisher: no ack
      if (entry[1] === Status.OK) { this.counts.handled++; entry[2] = ackValue(entry[2]) } else this.counts.failed++ // an ack carries no result, but how many threads ran it (4.11)
      reply(entry)
    }, ev.ack ? conn.requests : null, now, bytes, tally, 'event', flow)
  }

  /** The ack of `ev`, when it asks for one (null: none sent, nothing to remember). */
  send (conn, ev, entry) {
    return ev.ack ? this.o.replies.answer(conn, entry) : null
  }

  /** What runs `ev`: its group's subscription, or for a broadcast (no group) every subscription to its event here, together. */
  handlerOf (ev) {
    const subs = this.o.subscriptions
    if (ev.group !== null) return subs.handler(ev.event, ev.group)
    const groups = subs.groupsOf(ev.event)
    if (groups.length === 0) return undefined
    if (groups.length === 1) return groups[0][1]
    return (payload, ctx) => Promise.all(groups.map(([, h]) => { try { return h(payload, ctx) } catch (err) { return Promise.reject(err) } }))
  }

  /** Counters, and by event: { received, handled, failed }. */
  stats () {
    const byEvent = {}
    for (const [e, t] of this.byEvent) byEvent[e] = { received: t.received, handled: t.ok, failed: t.errors }
    return { ...this.counts, byEvent }
  }
}
