// Whether a peer takes new work now: one decision for every kind of work (a request, a
// stream, an event), taken at one door, take(), by the one intake (intake.js), as Envoy's
// overload manager is one decision point. It decides and holds; what was taken or refused is
// counted by the kinds that answer it. In order:
//   - a draining peer takes nothing new (DRAINING: the client goes elsewhere);
//   - work with no handler here, never (UNKNOWN_METHOD: a method it does not serve, an event
//     it does not subscribe to; the kind, which looked the handler up, names what it lacks);
//   - past its memory limit's shedding point (memory-limit.js), nothing (BUSY, naming the limit);
//   - the work's bytes must fit the byte budget: maxInflightBytes, shrinking as the process
//     nears its memory limit (BUSY);
//   - a stream must fit the stream caps, all connections together and on its own (BUSY);
//   - and a place among the work in flight (maxInflight: requests running or queued for a
//     thread, streams open; with threads, fewer for requests and events while the threads'
//     queue is bounded by time, `places` from worker-pool.js) must be free, or the work's
//     flow (flows.js) must hold less than its share: the places divided among the flows
//     holding places, one at least (BUSY). So a peer full of
//     one busy client's work still takes a modest client's call at once, and a lone flow gets
//     every place (work-conserving). Past its share, the flows below theirs may take the peer to
//     twice maxInflight, never beyond.
// What it takes it holds until release(): its place and its bytes, counted in its flow. The
// counts of what is held are the peer's load (replies carry it; clients balance on it).
import { Status } from '../protocol/constants.js'

const DRAINING = Object.freeze({ status: Status.DRAINING, message: 'peer is draining' })
/** The refusal of work with no handler here: its kind says what it lacks (intake.js). */
export const UNKNOWN = Object.freeze({ status: Status.UNKNOWN_METHOD, message: 'no handler' })

export class Admission {
  /**
   * @param {object} o
   * @param {{ maxInflight: number, maxInflightBytes: number, maxStreams: number, maxStreamsPerConnection: number }} o.limits
   * @param {() => string} o.pressedMessage  why a peer near its memory limit refuses work
   * @param {() => number} [o.places]  the places its threads may hold now (worker-pool.js), when fewer than maxInflight
   */
  constructor (o) {
    this.o = o
    this.draining = false
    this.inflight = 0 // places held: requests running or queued, streams open
    this.bytes = 0 //    bytes held: requests' and request streams' input
    this.streams = 0 //  streams open
    this.flows = 0 //    flows holding places
    this.byShare = 0 //  places taken past maxInflight for a flow below its share (the one fact only this decision knows)
    this.memory = null // the memory limit's watch once started (memory-limit.js: pressed, room), or null
  }

  /**
   * The verdict on new work run by `fn` (undefined: nothing here runs it) holding `bytes` in
   * `flow`: `fn` when it is taken (its place and bytes are held until release()), or the
   * refusal { status, message } (UNKNOWN: no handler). `conn`: the connection a stream opens
   * on (its own cap), or null for a request or an event.
   */
  take (fn, bytes, conn, flow) {
    if (this.draining) return DRAINING
    if (typeof fn !== 'function') return UNKNOWN
    const l = this.o.limits
    const memory = this.memory
    if (memory !== null && memory.pressed) return { status: Status.BUSY, message: this.o.pressedMessage() }
    if (bytes > 0) {
      const budget = memory === null ? l.maxInflightBytes : l.maxInflightBytes * memory.room
      if (this.bytes + bytes > budget) {
        return { status: Status.BUSY, message: budget < l.maxInflightBytes ? this.o.pressedMessage() : `peer busy: ${this.bytes} bytes of work in flight (maxInflightBytes ${l.maxInflightBytes})` }
      }
    }
    if (conn !== null) {
      if (this.streams >= l.maxStreams) return { status: Status.BUSY, message: `peer busy: ${this.streams} streams open (maxStreams ${l.maxStreams})` }
      const open = conn.streams?.size ?? 0
      if (open >= l.maxStreamsPerConnection) return { status: Status.BUSY, message: `peer busy: ${open} streams open on this connection (maxStreamsPerConnection ${l.maxStreamsPerConnection})` }
    }
    const places = this.places(conn)
    if (this.inflight >= places) {
      if (this.inflight >= 2 * places || flow.held >= this.share(flow, places)) return { status: Status.BUSY, message: `peer busy: ${this.inflight} requests in flight${places < l.maxInflight ? ` (${places} places: maxQueueMs of work queued)` : ''}` }
      this.byShare++
    }
    this.inflight++
    this.bytes += bytes
    if (conn !== null) this.streams++
    if (flow.held++ === 0) this.flows++
    return fn
  }

  /**
   * The places work may hold now: maxInflight; for a request or an event (`conn` null), fewer
   * while the threads' queue is bounded by time (worker-pool.js places), besides the streams
   * open, which that bound does not count. A stream is held to maxInflight and its own caps.
   */
  places (conn) {
    const max = this.o.limits.maxInflight
    if (conn !== null || this.o.places === undefined) return max
    return Math.min(max, this.o.places() + this.streams)
  }

  /** The places `flow` may hold when the peer is full: the places shared among the flows holding places, itself included; one at least. */
  share (flow, places) {
    return Math.max(1, Math.floor(places / (this.flows + (flow.held === 0 ? 1 : 0))))
  }

  /** Work taken by take() in `flow` is over: its place and its `bytes` are free (`stream`: it was a stream). */
  release (bytes, stream, flow) {
    this.inflight--
    this.bytes -= bytes
    if (stream) this.streams--
    if (--flow.held === 0) this.flows--
  }
}
