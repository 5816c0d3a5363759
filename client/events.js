// The event codec of the entry kind (entry-calls.js), PROTOCOL.md 4.11. One delivery is one
// call: to one peer of one subscribing group (a publish), or to one peer for every
// subscription it has (a broadcast, pinned to that peer). It is routed, balanced, retried after
// a lost connection or an attempt timeout and refused busy as a request is; the peer's ack is a
// REPLY entry. A delivery that asks for no ack is over once ZeroMQ took it (calls.js sent()).
// Its outcome goes to the fan-out that made it (fan-out.js), which answers the caller once
// every delivery is over.
import { encodeEvent, eventFrame } from '../protocol/event-codec.js'
import { Feature } from '../protocol/constants.js'
import { TimeoutError, NoSubscribersError } from '../protocol/errors.js'
import { channels } from '../runtime/diagnostics.js'

/** What an event delivery is, as the entry kind reads it: a new object per client (its counts). */
export function eventCodec () {
  const counts = { started: 0, ok: 0, failed: 0, redelivered: 0 } // redelivered: delivered after more than one attempt (its handler may have run twice)
  return {
    noun: 'event',
    channel: channels.clientEvent,
    needs: Feature.EVENTS,
    since: '0.3.0', // the first release whose peers take events
    waits: true, //    with no subscriber yet, it waits for one until its deadline
    producer: true, // its span is a PRODUCER's (client/tracing.js)
    what: 'the payload',
    learnsSizes: false, // an ack carries no result
    counts,
    entry: eventEntry,
    frame: encodeEvent,
    joined: eventFrame,
    /**
     * The delivery is over: its fan-out hears it (call.owner), and what its ack carried (how
     * many threads ran it, or nil). One that never learnt where to go (calls.js place()) fails
     * the whole fan-out: no delivery was made.
     */
    deliver (call, err, value) {
      if (call.placing !== null) return call.owner.fail(err)
      if (err === null && call.attempts > 1) counts.redelivered++
      call.owner.delivered(call, err, value)
    },
    timedOut (call) {
      return new TimeoutError(`zeromesh: event "${call.method}"${groupText(call)} got no ack within ${call.timeout} ms (${call.attempts} attempt${call.attempts === 1 ? '' : 's'})`)
    },
    unroutable (message) {
      return new NoSubscribersError(message)
    },
    /** Its subscribers are known, and none of them was up before the deadline (down, or frozen and dropped). */
    noneUp (call) {
      return new NoSubscribersError(`zeromesh: no subscriber of "${call.method}"${groupText(call)} was up within ${call.timeout} ms`)
    },
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
