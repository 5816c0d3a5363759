// How an event's delivery is sent and acknowledged (PROTOCOL.md 4.11): the event kind of the
// call lifecycle (client/calls.js). One delivery is one call: to one peer of one subscribing
// group (a publish), or to one peer for every subscription it has (a broadcast, pinned to that
// peer). It is routed, balanced, retried after a lost connection or an attempt timeout and
// refused busy as a request is; the peer's ack is a REPLY entry. A delivery that asks for no
// ack is over once ZeroMQ took it (calls.js sent()). Its outcome goes to the fan-out that made
// it (fan-out.js), which answers the caller once every delivery is over.
import { Outbox } from '../transport/outbox.js'
import { encodeEvent, eventFrame } from '../protocol/event-codec.js'
import { packEntry, FRAME_OVERHEAD } from '../protocol/frames.js'
import { Limits, Feature } from '../protocol/constants.js'
import { TimeoutError, NoSubscribersError, invalidArgument } from '../protocol/errors.js'
import { channels } from '../runtime/diagnostics.js'

export class Events {
  /**
   * @param {object} o
   * @param {(ep: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send  the connector's send
   * @param {number} o.maxMessageSize
   * @param {{ sent(call, peer, code): void, ended(call, peer, r): void }} o.calls  what it tells the lifecycle
   */
  constructor (o) {
    this.o = o
    this.noun = 'event'
    this.channel = channels.clientEvent // its diagnostics channel (runtime/diagnostics.js)
    this.needs = Feature.EVENTS
    this.since = '0.3.0' // the first release whose peers take events
    this.measures = true //  an ack times the peer as a reply does
    this.long = false
    this.waits = true //     with no subscriber yet, it waits for one until its deadline
    this.producer = true //  its span is a PRODUCER's (client/tracing.js)
    this.counts = { started: 0, ok: 0, failed: 0, redelivered: 0 } // redelivered: delivered after more than one attempt (its handler may have run twice)
    this.lone = false // the delivery pack() made last is a whole frame, to leave at once (send)
    // Deliveries for one peer made in the same turn leave together, as requests do.
    this.outbox = new Outbox({
      send: (peer, entries, calls) => o.send(peer.endpoint, [eventFrame(entries)], (code) => { for (const c of calls) o.calls.sent(c, peer, code) }),
      keep: (call, peer) => !call.settled && call.peer === peer,
      maxBatch: Limits.maxBatch,
      maxBytes: o.maxMessageSize,
      overhead: FRAME_OVERHEAD,
      early: true,
    })
  }

  pack (call, peer, remaining) {
    const lone = this.lone = this.outbox.lone(peer, peer.calls.size)
    const entry = eventEntry(call, remaining)
    let packed
    try {
      packed = lone ? encodeEvent([entry]) : packEntry(entry)
    } catch (err) {
      throw invalidArgument(`the payload of "${call.method}" could not be encoded: ${err?.message ?? err}`)
    }
    const size = lone ? packed.length : FRAME_OVERHEAD + packed.length
    if (size > this.o.maxMessageSize) throw invalidArgument(`event "${call.method}" is ${size} bytes, larger than maxMessageSize ${this.o.maxMessageSize}`)
    if (call.size === 0) call.size = size
    return packed
  }

  send (call, peer, packed) {
    if (this.lone) {
      this.o.send(peer.endpoint, [packed], (code) => this.o.calls.sent(call, peer, code))
      return
    }
    this.outbox.add(peer, peer, packed, call, peer.calls.size)
  }

  copy (call, peer, remaining) {
    let frame
    try { frame = encodeEvent([eventEntry(call, remaining)]) } catch { return false }
    this.o.send(peer.endpoint, [frame], () => {})
    return true
  }

  /** A frame of several acks from `peer`: the publishers it wakes send in one frame. */
  hold (peer) {
    this.outbox.hold(peer, peer)
  }

  detached () {}

  timedOut (call) {
    return new TimeoutError(`zeromesh: event "${call.method}"${groupText(call)} got no ack within ${call.timeout} ms (${call.attempts} attempt${call.attempts === 1 ? '' : 's'})`)
  }

  unroutable (message) {
    return new NoSubscribersError(message)
  }

  /** Its subscribers are known, and none of them was up before the deadline (down, or frozen and dropped). */
  noneUp (call) {
    return new NoSubscribersError(`zeromesh: no subscriber of "${call.method}"${groupText(call)} was up within ${call.timeout} ms`)
  }

  /** A REPLY entry for a delivery: its ack (or refusal). */
  answer (call, peer, r) {
    this.o.calls.ended(call, peer, r)
  }

  /** The delivery is over: its fan-out hears it (call.owner). */
  deliver (call, err) {
    if (err === null && call.attempts > 1) this.counts.redelivered++
    call.owner.delivered(call, err)
  }
}

/** A delivery's EVENT entry: [id, event, payload, timeoutMs, group, ack, trace?, headers?] (PROTOCOL.md 4.11). */
function eventEntry (call, remaining) {
  const group = call.group ?? null
  if (call.headers === null) return call.trace === null ? [call.id, call.method, call.args, remaining, group, call.ack] : [call.id, call.method, call.args, remaining, group, call.ack, call.trace]
  return [call.id, call.method, call.args, remaining, group, call.ack, call.trace, call.headers]
}

function groupText (call) {
  return call.pin !== null ? ` to ${call.pin}` : call.group === null || call.group === undefined ? '' : ` for group "${call.group}"`
}
