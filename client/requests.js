// How a request is sent and how its reply reads: the request kind of the call lifecycle
// (client/calls.js). An attempt leaves alone at once, or coalesced with the other requests
// for its peer made in the same turn (transport/outbox.js), each still failing over on its
// own; a REPLY frame's entries each end their call. Everything else (routing, refusals,
// deadlines, failover) is the lifecycle's.
import { Outbox } from '../transport/outbox.js'
import { ReplySizes } from './reply-sizes.js'
import { encodeRequest } from '../protocol/codec.js'
import { packEntry, requestFrame, FRAME_OVERHEAD } from '../protocol/frames.js'
import { Limits, Accepts } from '../protocol/constants.js'
import { TimeoutError, UnknownMethodError, invalidArgument } from '../protocol/errors.js'
import { channels } from '../runtime/diagnostics.js'

export class Requests {
  /**
   * @param {object} o
   * @param {(ep: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send  the connector's send
   * @param {number} o.maxMessageSize
   * @param {{ sent(call, peer, code): void, ended(call, peer, r): void }} o.calls
   *   what it tells the lifecycle: ZeroMQ's verdict on a frame, and each reply
   */
  constructor (o) {
    this.o = o
    this.noun = 'request'
    this.channel = channels.clientRequest // its diagnostics channel (runtime/diagnostics.js)
    this.needs = 0 //      every peer takes requests
    this.measures = true
    this.long = false
    this.counts = { started: 0, ok: 0, failed: 0 }
    this.replySizes = new ReplySizes() // method -> bytes per reply: large ones are not coalesced
    this.lone = false // the attempt pack() made last is a whole frame, to leave at once (send)
    // Requests for one peer made in the same turn leave together (coalescing); each in a frame
    // still fails over on its own.
    this.outbox = new Outbox({
      send: (peer, entries, calls) => o.send(peer.endpoint, [requestFrame(entries)], (code) => { for (const c of calls) o.calls.sent(c, peer, code) }),
      keep: (call, peer) => !call.settled && call.peer === peer, // not aborted or moved on before it left
      maxBatch: Limits.maxBatch, // what a peer accepts by default
      maxBytes: o.maxMessageSize,
      overhead: FRAME_OVERHEAD,
      early: true,
    })
  }

  /** A new request's call, with the promise its caller gets (call.promise). */
  adopt (call) {
    call.promise = new Promise((resolve, reject) => { call.resolve = resolve; call.reject = reject })
    return call
  }

  /**
   * The attempt's bytes. A lone request (nothing else of this client's on its way to the
   * peer), or one whose method's replies are large (reply-sizes.js), is packed as its whole
   * frame, to leave at once as it is; any other as an entry, to be joined with the others of
   * this turn.
   */
  pack (call, peer, remaining) {
    const lone = this.lone = this.outbox.lone(peer, peer.calls.size) || this.replySizes.large(call.method)
    const entry = requestEntry(call, remaining)
    let packed
    try {
      packed = lone ? encodeRequest([entry]) : packEntry(entry)
    } catch (err) {
      throw invalidArgument(`args of "${call.method}" could not be encoded: ${err?.message ?? err}`)
    }
    const size = lone ? packed.length : FRAME_OVERHEAD + packed.length
    if (size > this.o.maxMessageSize) throw invalidArgument(`request "${call.method}" is ${size} bytes, larger than maxMessageSize ${this.o.maxMessageSize}`)
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
    try { frame = encodeRequest([requestEntry(call, remaining)]) } catch { return false }
    this.o.send(peer.endpoint, [frame], () => {})
    return true
  }

  detached () {}

  timedOut (call) {
    return new TimeoutError(`zeromesh: "${call.method}" got no reply within ${call.timeout} ms (${call.attempts} attempt${call.attempts === 1 ? '' : 's'})`)
  }

  deliver (call, err, value) {
    if (err === null) call.resolve(value)
    else call.reject(err)
  }

  /** A frame of several replies from `peer`: the callers it wakes send in one frame. */
  hold (peer) {
    this.outbox.hold(peer, peer)
  }

  /** A REPLY entry of about `bytes` for `call`: its reply. */
  answer (call, peer, r, bytes) {
    this.replySizes.observe(call.method, bytes)
    this.o.calls.ended(call, peer, r)
  }

  unroutable (message) {
    return new UnknownMethodError(message)
  }
}

/** A call's REQUEST entry (PROTOCOL.md 4.1): this client reads large binary results in bulk frames (4.2.1). */
function requestEntry (call, remaining) {
  if (call.headers === null) return [call.id, call.method, call.args, remaining, call.trace, Accepts.BULK]
  return [call.id, call.method, call.args, remaining, call.trace, Accepts.BULK, call.headers]
}
