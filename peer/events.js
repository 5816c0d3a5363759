// The events a peer receives (PROTOCOL.md 4.11): each EVENT entry runs the handler of the
// subscription it names (its event and group), or every subscription to its event on this
// peer (a broadcast: no group), through the one admission and the one way work runs
// (dispatch.js execute(): its ctx, span, middleware). An entry that asks for an ack gets a
// REPLY entry once its handlers finished (OK, or REMOTE with the handler's error), and is
// remembered as a request is, so a redelivered event (the publisher's retry, after a lost
// connection or an attempt timeout) runs once on this peer and gets the same ack again. An
// entry that asks for none is run once and forgotten: nothing answers it.
import { Status } from '../protocol/constants.js'

export class PeerEvents {
  /**
   * @param {object} o
   * @param {import('./subscriptions.js').Subscriptions} o.subscriptions  what this peer subscribes to
   * @param {import('./dispatch.js').Dispatcher} o.dispatcher  runs admitted work (execute) and counts refusals
   * @param {import('./admission.js').Admission} o.admission
   * @param {import('./recent-requests.js').RecentRequests} o.recent  the duplicates memory (ids are shared with requests)
   * @param {import('./reply-outbox.js').ReplyOutbox} o.replies
   * @param {{ now(): number }} o.clock
   */
  constructor (o) {
    this.o = o
    this.counts = { received: 0, handled: 0, failed: 0, unknown: 0, refused: 0, invalid: 0, duplicates: 0, unacked: 0 }
    // Received, handled and failed by event, for events this peer subscribes to only: a
    // publisher cannot add a name (an unknown event counts in `unknown`), so metric labels stay bounded.
    this.byEvent = new Map() // event -> { received, ok, errors }
  }

  /** The events of one EVENT frame of `bytes` from `conn` (connections.js); each holds its share of the bytes while it runs. */
  onEvents (conn, msg, bytes) {
    const { recent, replies, clock } = this.o
    const now = clock.now()
    const memory = recent.of(conn, now)
    const { events, invalid } = msg
    const share = events.length === 0 ? 0 : Math.ceil(bytes / events.length)
    replies.enter(conn, events.length + invalid.length)
    try {
      for (const bad of invalid) {
        this.counts.invalid++
        if (bad.ack) replies.answer(conn, [bad.id, Status.INVALID_REQUEST, [`invalid event: ${bad.reason}`, null]])
      }
      for (const ev of events) this.one(conn, memory, ev, now, share)
    } finally {
      replies.leave()
    }
  }

  one (conn, memory, ev, now, share) {
    const { replies, admission, dispatcher } = this.o
    this.counts.received++
    if (conn.streams !== null && conn.streams.has(ev.id)) { // ids are shared with streams (PROTOCOL.md 4.10)
      this.counts.invalid++
      if (ev.ack) replies.answer(conn, [ev.id, Status.INVALID_REQUEST, [`event id ${ev.id} is an open stream's on this connection (ids are shared)`, null]])
      return
    }
    if (ev.ack) {
      const seen = memory.begin(ev.id)
      if (seen === 'running') { this.counts.duplicates++; return }
      if (seen !== 'new') { this.counts.duplicates++; replies.send(conn, seen); return }
    } else {
      this.counts.unacked++
    }
    // The ack, when one is asked for, remembered as its packed bytes; refusals are not
    // remembered (refused busy, draining or not subscribed, it may come back).
    const answer = (entry) => {
      if (!ev.ack) return
      const packed = replies.answer(conn, entry)
      if (entry[1] === Status.BUSY || entry[1] === Status.DRAINING || entry[1] === Status.UNKNOWN_METHOD) memory.forget(entry[0])
      else memory.finish(entry[0], packed)
    }
    const handler = this.handlerOf(ev)
    if (handler === undefined) {
      this.counts.unknown++
      if (admission.draining) return answer([ev.id, Status.DRAINING, ['peer is draining', null]])
      return answer([ev.id, Status.UNKNOWN_METHOD, [`no subscription to "${ev.event}"${ev.group === null ? '' : ` in group "${ev.group}"`}; this peer subscribes to ${this.o.subscriptions.text()}`, null]])
    }
    const flow = this.o.flows.of(conn, ev.headers)
    const fn = admission.admit(handler, share, null, flow)
    if (typeof fn !== 'function') { this.counts.refused++; return answer([ev.id, fn.status, [fn.message, null]]) }
    let tally = this.byEvent.get(ev.event)
    if (tally === undefined) this.byEvent.set(ev.event, tally = { received: 0, ok: 0, errors: 0 })
    tally.received++
    const req = { id: ev.id, method: ev.event, args: ev.payload, timeoutMs: ev.timeoutMs, trace: ev.trace, headers: ev.headers, group: ev.group }
    dispatcher.execute(req, fn, (entry) => {
      if (entry === null) return // cancelled by its publisher: no ack
      if (entry[1] === Status.OK) { this.counts.handled++; entry[2] = null } else this.counts.failed++ // an ack carries no result
      answer(entry)
    }, ev.ack ? memory : null, now, share, tally, 'event', flow)
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
