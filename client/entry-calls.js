// Calls whose attempts are entries of a frame and whose answers are REPLY entries: requests
// (REQUEST, PROTOCOL.md 4.1) and event deliveries (EVENT, 4.11) are this one kind of the call
// lifecycle (calls.js) with two codecs (requests.js, events.js). An attempt leaves alone at
// once, or coalesced with the others for its peer made in the same turn (transport/outbox.js),
// each still failing over on its own; each REPLY entry ends its call. Everything else (routing,
// refusals, deadlines, failover) is the lifecycle's; what differs between requests and events
// is the codec's:
//   noun, channel, needs, since?, waits?, producer?   as calls.js and call-path.js read them
//   entry(call, remaining)   the attempt's entry
//   frame(entries)           a whole frame of entries (a lone attempt, a hedge's copy)
//   joined(packed)           a frame of entries packed one at a time (packEntry)
//   learnsSizes              whether its replies' sizes are learnt: large ones are not coalesced (reply-sizes.js)
//   what                     how an encoding error names what could not be encoded ('args', 'the payload')
//   timedOut(call), unroutable(message), noneUp?(call)   its errors
//   adopt?(call)             a new call of it gets the promise its caller holds
//   deliver(call, err, value)  the outcome to its caller (a promise, or an event's fan-out)
//   counts                   { started, ok, failed, ... }
import { Outbox } from '../transport/outbox.js'
import { ReplySizes } from './reply-sizes.js'
import { packEntry, FRAME_OVERHEAD } from '../protocol/frames.js'
import { Limits } from '../protocol/constants.js'
import { invalidArgument } from '../protocol/errors.js'

export class EntryCalls {
  /**
   * @param {object} codec  what differs (above)
   * @param {object} o
   * @param {(ep: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send  the connector's send
   * @param {number} o.maxMessageSize
   * @param {{ sent(call, peer, code): void, ended(call, peer, r): void }} o.calls
   *   what it tells the lifecycle: ZeroMQ's verdict on a frame, and each answer
   */
  constructor (codec, o) {
    this.codec = codec
    this.o = o
    this.noun = codec.noun
    this.channel = codec.channel // its diagnostics channel (runtime/diagnostics.js)
    this.needs = codec.needs
    this.since = codec.since
    this.waits = codec.waits === true //       with no peer for it yet, it waits for one until its deadline
    this.producer = codec.producer === true // its span is a PRODUCER's (client/tracing.js)
    this.noneUp = codec.noneUp
    this.measures = true // its answers time the peer (p2c, adaptive attempt timeouts)
    this.long = false
    this.counts = codec.counts
    this.replySizes = codec.learnsSizes ? new ReplySizes() : null // method -> bytes per reply
    // Calls for one peer made in the same turn leave together (coalescing); each in a frame
    // still fails over on its own.
    this.outbox = new Outbox({
      send: (peer, entries, calls) => o.send(peer.endpoint, [codec.joined(entries)], (code) => { for (const c of calls) o.calls.sent(c, peer, code) }),
      keep: (call, peer) => !call.settled && call.peer === peer, // not aborted or moved on before it left
      maxBatch: Limits.maxBatch, // what a peer accepts by default
      maxBytes: o.maxMessageSize,
      overhead: FRAME_OVERHEAD,
      early: true,
    })
  }

  /** A new call, with what its caller holds (a request's promise: call.promise). */
  adopt (call) {
    this.codec.adopt?.(call)
    return call
  }

  /**
   * The attempt's bytes, as send() takes them. A lone call (nothing else of this client's on
   * its way to the peer), or one whose method's replies are large (reply-sizes.js), is packed
   * as its whole frame, in the frames array it leaves in at once; any other as an entry (a
   * Buffer), to be joined with the others of this turn.
   */
  pack (call, peer, remaining) {
    const lone = this.outbox.lone(peer, peer.calls.size) || (this.replySizes !== null && this.replySizes.large(call.method))
    const entry = this.codec.entry(call, remaining)
    let packed
    try {
      packed = lone ? this.codec.frame([entry]) : packEntry(entry)
    } catch (err) {
      throw invalidArgument(`${this.codec.what} of "${call.method}" could not be encoded: ${err?.message ?? err}`)
    }
    const size = lone ? packed.length : FRAME_OVERHEAD + packed.length
    if (size > this.o.maxMessageSize) throw invalidArgument(`${this.noun} "${call.method}" is ${size} bytes, larger than maxMessageSize ${this.o.maxMessageSize}`)
    if (call.size === 0) call.size = size
    return lone ? [packed] : packed
  }

  /** Sends what pack() gave: a lone frame at once, an entry through the outbox. */
  send (call, peer, packed) {
    if (Array.isArray(packed)) {
      this.o.send(peer.endpoint, packed, (code) => this.o.calls.sent(call, peer, code))
      return
    }
    this.outbox.add(peer, peer, packed, call, peer.calls.size)
  }

  copy (call, peer, remaining) {
    let frame
    try { frame = this.codec.frame([this.codec.entry(call, remaining)]) } catch { return false }
    this.o.send(peer.endpoint, [frame], () => {})
    return true
  }

  detached () {}

  timedOut (call) {
    return this.codec.timedOut(call)
  }

  unroutable (message) {
    return this.codec.unroutable(message)
  }

  deliver (call, err, value) {
    this.codec.deliver(call, err, value)
  }

  /** A frame of several answers from `peer`: the callers it wakes send in one frame. */
  hold (peer) {
    this.outbox.hold(peer, peer)
  }

  /** A REPLY entry of about `bytes` for `call`: its answer. */
  answer (call, peer, r, bytes) {
    if (this.replySizes !== null) this.replySizes.observe(call.method, bytes)
    this.o.calls.ended(call, peer, r)
  }
}
