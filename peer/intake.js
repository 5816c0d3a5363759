// The one way work enters a peer: a request (REQUEST, PROTOCOL.md 4.1), an event (EVENT, 4.11)
// and a stream (STREAM_OPEN, 4.10) each pass the same steps, in this order, written once here:
//   entry       the frame's entries, each holding its share of the frame's bytes, its
//               connection's duplicates memory looked up once, replies of the frame batched;
//   id collision   ids are shared by a connection's requests, events and streams: an entry
//               whose id an open stream holds, or a stream whose id a request holds, is refused;
//   duplicates  an entry that is remembered (a request, an acked event; never a stream, 4.10)
//               and runs or ran already is dropped, or answered again from memory;
//   flow        the flow it is counted in when flows share a busy peer (flows.js);
//   admission   its handler, looked up by its kind, given a place among the work in flight,
//               or a refusal: the one door, admission.js take();
//   run         its kind runs it, every kind by the one run path: the context, span and
//               diagnostics (dispatch.js begin()), the middleware and handler (call()); the
//               handler's output a reply entry (execute()) or a stream's items (streams.js);
//   reply and remember   the answer leaves, and a remembered entry keeps it for a duplicate.
// One refusal rule for every kind: no refusal is remembered (BUSY, DRAINING, UNKNOWN_METHOD: a
// peer may take the work later, or serve the method later), PROTOCOL.md section 5.
//
// A kind (requests.js, events.js, streams.js) says only what differs for its message, and sends its own answers:
//   remembers            whether it keeps a duplicates memory at all
//   batched              whether its answers are REPLY entries (batched per frame, reply-outbox.js)
//   remembered(item)     whether this entry is remembered (an event: only when it asks for an ack)
//   received(item), duplicate()   counted
//   invalid(conn, bad)   an entry that failed validation: answered INVALID_REQUEST, never run
//   clash(conn, item)    its id is taken by another kind of work on this connection
//   handlerOf(item)      what runs it here, or undefined (refused UNKNOWN_METHOD, named by unknown(item))
//   bytes(item, share)   the bytes it holds while it runs (`share`: its share of its frame's)
//   streamed             whether it is a stream (held to the stream caps, its connection's too)
//   refuse(conn, item, refusal)      answers a refusal, and counts it
//   run(conn, item, fn, flow, now, bytes, reply)   runs admitted work; `reply(entry)` once
//   send(conn, item, entry)          sends a REPLY entry; returns what a duplicate gets (or null)
import { Status, MessageType } from '../protocol/constants.js'
import { UNKNOWN } from './admission.js'

/** Whether a reply entry of `status` is a refusal: the work was not taken, so nothing is remembered. */
export function refused (status) {
  return status === Status.BUSY || status === Status.DRAINING || status === Status.UNKNOWN_METHOD
}

export class Intake {
  /**
   * @param {object} o
   * @param {import('./recent-requests.js').RecentRequests} o.recent  the duplicates memory, by connection
   * @param {{ enter(conn, count: number): void, leave(): void, send(conn, packed): void }} o.replies  the reply outbox
   * @param {{ of(conn, headers): object }} o.flows
   * @param {import('./admission.js').Admission} o.admission  the one door new work passes
   * @param {{ now(): number }} o.clock
   * @param {(conn, now: number) => void} o.asked  a connection asked for work (a secured peer remembers it: key-proofs.js)
   */
  constructor (o) {
    this.recent = o.recent
    this.replies = o.replies
    this.flows = o.flows
    this.admission = o.admission
    this.clock = o.clock
    this.asked = o.asked
  }

  /**
   * Its part of the socket's message table (core.js): CANCEL, for any kind, since ids are
   * shared: an open stream's ends (streams.js), else running work's signal aborts (dispatch.js).
   */
  routes ({ streams, dispatcher }) {
    return {
      [MessageType.CANCEL]: (conn, msg) => {
        const scope = this.recent.of(conn)
        for (const id of msg.ids) if (conn.streams === null || !streams.cancel(conn, id)) dispatcher.cancel(scope, id)
      },
    }
  }

  /**
   * The entries of one frame of `bytes` from `conn` (connections.js), of `kind`: `items`
   * decoded, `invalid` those that failed validation ({ id, reason, ... }).
   */
  take (conn, kind, items, invalid, bytes) {
    const now = this.clock.now() // once per frame
    const memory = kind.remembers ? this.recent.of(conn, now) : null // once per frame
    const share = items.length === 0 ? 0 : Math.ceil(bytes / items.length)
    this.asked(conn, now)
    if (!kind.batched) {
      for (let i = 0; i < invalid.length; i++) kind.invalid(conn, invalid[i])
      for (let i = 0; i < items.length; i++) this.one(conn, kind, items[i], memory, now, share)
      return
    }
    // A lone entry (the only one in its frame, nothing waiting for its connection) is answered
    // at once when its handler returns synchronously: no added latency at low load.
    this.replies.enter(conn, items.length + invalid.length)
    try {
      for (let i = 0; i < invalid.length; i++) kind.invalid(conn, invalid[i])
      for (let i = 0; i < items.length; i++) this.one(conn, kind, items[i], memory, now, share)
    } finally {
      this.replies.leave()
    }
  }

  /** One entry, through every step. */
  one (conn, kind, item, memory, now, share) {
    kind.received(item)
    const id = item.id
    // Ids are shared by a connection's requests, events and streams (PROTOCOL.md 4.10).
    if ((conn.streams !== null && conn.streams.has(id)) || (!kind.remembers && this.recent.knows(conn, id))) return kind.clash(conn, item)
    const remembered = memory !== null && kind.remembered(item)
    if (remembered) {
      const seen = memory.begin(id)
      if (seen === 'running') { kind.duplicate(); return }
      if (seen !== 'new') { kind.duplicate(); this.replies.send(conn, seen); return }
    }
    const flow = this.flows.of(conn, item.headers)
    const bytes = kind.bytes(item, share)
    const fn = this.admission.take(kind.handlerOf(item), bytes, kind.streamed ? conn : null, flow)
    if (typeof fn !== 'function') {
      if (remembered) memory.forget(id)
      return kind.refuse(conn, item, fn === UNKNOWN ? kind.unknown(item) : fn)
    }
    kind.run(conn, item, fn, flow, now, bytes, remembered
      ? (entry) => this.remember(conn, kind, item, entry, memory)
      : (entry) => { if (entry !== null) kind.send(conn, item, entry) })
  }

  /**
   * The answer of a remembered entry leaves (first: remembering is off the reply's path), then
   * is remembered as its packed bytes, sent again as they are to a duplicate; a refusal is
   * forgotten. `entry` null: cancelled by its client, no answer (forgotten with the connection's memory).
   */
  remember (conn, kind, item, entry, memory) {
    if (entry === null) return
    const packed = kind.send(conn, item, entry)
    if (refused(entry[1]) || packed === null) memory.forget(item.id)
    else memory.finish(item.id, packed)
  }
}
