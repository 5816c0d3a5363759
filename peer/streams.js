// The streams a peer serves (PROTOCOL.md 4.10). A STREAM_OPEN runs the method's handler; what
// it returns is sent as items: an async iterable (an async generator, a Readable) item by
// item, any other value as a stream of that one item. Items leave only within the credit the
// client grants (protocol/stream-producer.js), so a slow reader pauses the handler instead of
// filling memory. A stream holds a place among the requests in flight (maxInflight) while it
// is open, is capped per peer and per connection, and is never remembered for duplicates.
//
// A stream ends when its handler is done (STREAM_END OK with the count), throws (the error,
// after the items before it), or when the client cancels (CANCEL: ctx.signal aborts and the
// generator's `finally` runs), its deadline passes, the client goes silent while the stream
// waits for credit (a client sends "still here" credit: client/streams.js), its connection is
// cut (a revoked key), or the drain timeout passes (STREAM_END DRAINING).
//
// A request stream: a client that opens with `input` sends items too, within the credit this
// peer grants (counted against the peer's byte budget while the stream is open); the handler
// reads them from `ctx.input`, an async iterable.
//
// What all streams together hold for a slow network is capped too, whatever the clients
// grant: a client's credit is per stream, and a client may open many streams and read none.
// Item frames waiting to leave (in each stream's sender, for a full pipe) count against half
// the peer's maxInflightBytes; past it, handlers pause (a thread's get no more credit) until
// frames leave, so a peer holds at most that, plus a frame per stream, plus ZeroMQ's queues.
import { remoteValue } from '../protocol/issues.js'
import { Values } from '../runtime/values.js'
import { StreamProducer } from '../protocol/stream-producer.js'
import { StreamConsumer } from '../protocol/stream-consumer.js'
import { encodeStreamEnd, encodeStreamCredit } from '../protocol/stream-codec.js'
import { Status, Limits, STREAM_IDLE_MS, MessageType } from '../protocol/constants.js'
import { DrainingError, ConnectionLostError, RemoteError, RemoteCode } from '../protocol/errors.js'
import { isStream } from '../protocol/stream-producer.js'
import { OrderedSender } from '../transport/ordered-sender.js'
import { channels, answered } from '../runtime/diagnostics.js'

const NONE = Object.freeze([])
const SWEEP_MS = 1000 // how often streams waiting for credit are checked for a silent client

export class PeerStreams {
  /**
   * @param {object} o
   * @param {import('./dispatch.js').Dispatcher} o.dispatcher  runs it (its ctx, span, middleware) and counts it
   * @param {{ handler(method: string): Function|undefined, unknown(method: string): object }} o.service  what this peer serves (service.js)
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {(clientId: Buffer, frames: Buffer[], done?: (code: string|null) => void) => void} o.send  the listener's send (done: see ordered-sender.js)
   * @param {object} o.limits  maxMessageSize, maxBatch, maxInflightBytes, streamIdleTimeout, inputWindow { items, bytes }
   */
  constructor (o) {
    this.o = o
    this.remembers = false // streams keep no duplicates memory (PROTOCOL.md 4.10)
    this.batched = false //   their answers are frames of their own, in order (OrderedSender)
    this.streamed = true //   held to the stream caps (admission.js)
    this.all = new Set() //      every open PeerStream (each also in its connection's `streams`, by id)
    this.size = 0
    this.sweeper = null
    this.held = 0 //             bytes of frames waiting in the streams' senders, all together
    this.maxHeld = Math.floor(o.limits.maxInflightBytes / 2)
    this.waiting = new Set() //  streams whose handler paused for the cap on `held`
    this.counts = { opened: 0, ended: 0, failed: 0, cancelled: 0, refused: 0, reused: 0, stray: 0, violations: 0, silent: 0, drained: 0, cut: 0, expired: 0, undeliverable: 0, items: 0 }
  }

  /**
   * Its part of the socket's message table (core.js): STREAM_OPEN enters by the one intake
   * (intake.js); credit, the client's items and their end go to the stream they name.
   */
  routes (intake) {
    return {
      [MessageType.STREAM_OPEN]: (conn, msg) => msg.invalid === null ? intake.take(conn, this, [msg], NONE, 0) : intake.take(conn, this, NONE, [msg], 0),
      [MessageType.STREAM_CREDIT]: (conn, msg) => this.credit(conn, msg),
      [MessageType.STREAM_ITEM]: (conn, msg, frame) => this.items(conn, msg, frame.length),
      [MessageType.STREAM_END]: (conn, msg) => this.inputEnd(conn, msg),
    }
  }

  // As a kind of work the intake takes (intake.js): a STREAM_OPEN from `conn` (connections.js).

  received () {}

  remembered () {
    return false // never remembered for duplicates (PROTOCOL.md 4.10)
  }

  duplicate () {}

  /** The admission refused STREAM_OPEN `msg` (admission.js): counted, and answered. */
  refuse (conn, msg, refusal) {
    this.o.dispatcher.refusal(msg.id, msg.method, refusal)
    this.over(conn, msg, refusal)
  }

  /** Answers STREAM_OPEN `msg` with a STREAM_END of `status`: it is over before it began. */
  over (conn, msg, refusal) {
    this.counts.refused++
    this.o.send(conn.id, [encodeStreamEnd(msg.id, refusal.status, [refusal.message, null], 0)])
  }

  invalid (conn, msg) {
    if (conn.streams?.has(msg.id)) { this.counts.reused++; return } // an id in use: dropped, the first stream goes on
    this.o.dispatcher.counts.invalid++
    this.over(conn, msg, { status: Status.INVALID_REQUEST, message: `invalid stream: ${msg.invalid}` })
  }

  /**
   * Its id is taken: by an open stream of the connection (dropped: the first stream goes on),
   * or by a request of it running or remembered (refused, never run: PROTOCOL.md 4.10).
   */
  clash (conn, msg) {
    if (conn.streams?.has(msg.id)) { this.counts.reused++; return }
    this.o.dispatcher.counts.invalid++
    this.over(conn, msg, { status: Status.INVALID_REQUEST, message: `stream id ${msg.id} is a request's on this connection (stream and request ids are shared)` })
  }

  handlerOf (msg) {
    return this.o.service.handler(msg.method)
  }

  unknown (msg) {
    return this.o.service.unknown(msg.method)
  }

  /** A request stream's input holds the peer's byte budget (its input window) while it is open. */
  bytes (msg) {
    return msg.input ? this.o.limits.inputWindow.bytes : 0
  }

  /** Opens admitted stream `msg` (holding `reserved` bytes) and runs its handler `fn`, counted in `flow`. */
  run (conn, msg, fn, flow, now, reserved) {
    const d = this.o.dispatcher
    const l = this.o.limits
    d.counted(msg.method)
    conn.streams ??= new Map()
    const s = new PeerStream(msg, conn, d.begin(msg, 'stream', flow, now), reserved, now) // its ctx, span and diagnostics message
    // Every frame of the stream from here on leaves through its own sender, in order: items,
    // credit for its input, and its end after the items.
    s.out = new OrderedSender({
      send: (frames, done) => this.o.send(conn.id, frames, done),
      clock: this.o.clock,
      giveUpMs: l.streamIdleTimeout > 0 ? l.streamIdleTimeout : STREAM_IDLE_MS,
      onFail: (code) => this.undeliverable(s, code),
      onDrain: () => s.producer?.wake?.(),
      onBytes: (delta) => this.heldChanged(delta),
    })
    conn.streams.set(msg.id, s)
    this.all.add(s)
    this.size++
    this.counts.opened++
    if (msg.timeoutMs > 0) s.deadlineTimer = this.o.clock.setTimeout(() => { s.deadlineTimer = null; this.counts.expired++; this.stop(s, expiredEnd(s)) }, Math.min(msg.timeoutMs, 2 ** 31 - 1))
    if (msg.input) {
      s.input = new StreamConsumer({ ...l.inputWindow, grant: (items, bytes) => s.out.push(encodeStreamCredit(msg.id, items, bytes)) })
      s.ctx.input = { [Symbol.asyncIterator]: () => ({ next: () => s.input.next(), return: () => { s.input.abandon(null); return Promise.resolve({ value: undefined, done: true }) } }) }
      s.out.push(encodeStreamCredit(msg.id, l.inputWindow.items, l.inputWindow.bytes))
    }
    this.sweep()
    // The handler runs behind the middleware (dispatch.js call()): it starts when the last one
    // calls next(), unless the stream was stopped meanwhile; a chain that ends without it ends
    // the stream, empty. Its output is the stream's items (produce()).
    let started = false
    const ran = d.call((args) => {
      started = true
      if (conn.streams?.get(msg.id) === s) this.produce(s, fn, args)
    }, msg.args, s.ctx)
    if (ran !== undefined) ran.then(() => { if (!started) this.finish(s, null, 0) }, (err) => this.finish(s, err, 0)) // the chain's promise
  }

  /** Runs stream `s`'s handler `fn` with `args` (in its span, behind the middleware: call()): its output goes out as items under the client's credit. */
  produce (s, fn, args) {
    const l = this.o.limits
    const msg = s.open
    s.open = null // its args and headers are the handler's now: not held for the stream's life
    const grant = { items: Math.min(msg.items, Limits.maxCreditItems), bytes: Math.min(msg.bytes, Limits.maxCreditBytes) }
    const send = (frame, bulk) => { this.counts.items++; s.out.push(frame, bulk) }
    const end = (err, count, expired = false) => this.finish(s, err, count, expired)
    if (typeof fn.stream === 'function') { // a handler in a thread: it runs its producer there (worker-pool.js)
      s.producer = fn.stream(args, s.ctx, { id: msg.id, ...grant, maxFrame: l.maxMessageSize, maxBatch: l.maxBatch, bulk: msg.bulk, send, end, input: s.input, room: () => this.room(s), hold: (delta) => this.heldChanged(delta) })
      return
    }
    let out
    try {
      out = fn(args, s.ctx)
    } catch (err) {
      return this.finish(s, err, 0)
    }
    // The handler waits while a full pipe holds a frame's worth of its items here, or all
    // streams hold their cap (room()); a thread's producer waits for the credit lent to it.
    const traced = s.ctx.traced
    s.producer = new StreamProducer({ id: msg.id, source: traced === null ? sourceOf(out) : traced.bind(sourceOf(out)), ...grant, maxFrame: l.maxMessageSize, maxBatch: l.maxBatch, bulk: msg.bulk, send, end, room: () => this.room(s) })
    s.producer.start()
  }

  /**
   * Whether stream `s` may make more items now: less than a frame of its own waits to leave,
   * and all streams together hold less than their cap. When the cap is what stops it, its
   * handler is woken once frames of any stream leave.
   */
  room (s) {
    if (s.out.bytes >= Limits.maxMessageSize) return false // woken when its own frames leave (onDrain)
    if (this.held < this.maxHeld) return true
    this.waiting.add(s)
    return false
  }

  /**
   * What the streams hold changed by `delta`. Room made wakes the streams that waited for it,
   * first come first served, as many as it holds a frame each: woken all at once, hundreds of
   * handlers would each make an item before any of them looked at the cap again (seen when a
   * client with 256 streams hung up: 222 MB of items made for no one in one turn).
   */
  heldChanged (delta) {
    this.held += delta
    if (delta >= 0 || this.waiting.size === 0) return
    let room = this.maxHeld - this.held
    for (const s of this.waiting) {
      if (room <= 0) return
      this.waiting.delete(s)
      room -= Limits.maxMessageSize
      s.producer?.wake?.()
    }
  }

  /**
   * Stream `s`'s frames could not be sent: it ends. A client that is gone (EHOSTUNREACH) took
   * its connection's other streams with it: they end now too, before any of them makes
   * another item for no one.
   */
  undeliverable (s, code) {
    const gone = code === 'EHOSTUNREACH' ? [...(s.conn.streams?.values() ?? [])] : [s]
    for (const x of gone) { this.counts.undeliverable++; this.stop(x, null) }
  }

  /** STREAM_CREDIT: the client read items (or says it is still there: 0, 0). */
  credit (conn, msg) {
    const s = conn.streams?.get(msg.id)
    if (s === undefined) { this.counts.stray++; return }
    s.heardAt = this.o.clock.now()
    const p = s.producer
    if (p === null || (msg.items === 0 && msg.bytes === 0)) return
    // Credit never adds up past the caps, whatever the client grants.
    p.grant(Math.max(0, Math.min(msg.items, Limits.maxCreditItems - p.items)), Math.max(0, Math.min(msg.bytes, Limits.maxCreditBytes - p.bytes)))
  }

  /** STREAM_ITEM from the client: items of a request stream, within the credit this peer granted. */
  items (conn, msg, bytes) {
    const s = conn.streams?.get(msg.id)
    if (s === undefined || s.input === null) { this.counts.stray++; return }
    s.heardAt = this.o.clock.now()
    const broken = s.input.receive(msg.items, bytes)
    if (broken === null) return
    this.counts.violations++
    this.stop(s, encodeStreamEnd(msg.id, Status.INVALID_REQUEST, [`stream ${msg.id} broke the credit rule: ${broken}`, null], s.producer?.count ?? 0))
  }

  /** STREAM_END from the client: its items are over (a request stream). */
  inputEnd (conn, msg) {
    const s = conn.streams?.get(msg.id)
    if (s === undefined || s.input === null) { this.counts.stray++; return }
    s.heardAt = this.o.clock.now()
    if (msg.status === Status.OK && msg.count !== s.input.received) {
      s.input.end(new ConnectionLostError(`zeromesh: the client sent ${msg.count} items, ${s.input.received} arrived`))
      return
    }
    s.input.end(msg.status === Status.OK ? null : new RemoteError(msg.message ?? 'the client ended its items with an error', { remoteCode: msg.code }))
  }

  /** Streams whose handler waits for its client's credit now (the client reads slower than it makes items). */
  get awaitingCredit () {
    let n = 0
    for (const s of this.all) if (s.producer?.blocked) n++
    return n
  }

  /** Whether stream `id` is open on `conn` (a request may not take its id). */
  isOpen (conn, id) {
    return conn.streams?.has(id) ?? false
  }

  /** CANCEL for `id` on `conn`: returns whether it was a stream (then it is over, with no answer). */
  cancel (conn, id) {
    const s = conn.streams?.get(id)
    if (s === undefined) return false
    this.counts.cancelled++
    this.stop(s, null)
    return true
  }

  /** The connections `conns` were cut (a revoked key): their streams end, unanswered. */
  cut (conns) {
    for (const conn of conns) {
      if (conn.streams === null) continue
      for (const s of [...conn.streams.values()]) { this.counts.cut++; this.stop(s, null) }
    }
  }

  /** Every stream ends now with `status` (DRAINING at the drain timeout; none when every connection closes). */
  endAll (status, message) {
    for (const s of [...this.all]) {
      if (status === Status.DRAINING) this.counts.drained++
      this.stop(s, status === null ? null : encodeStreamEnd(s.id, status, [message, null], s.producer?.count ?? 0))
    }
  }

  /**
   * Ends `s` from outside its handler: the signal aborts, the producer stops, `frame` (if any)
   * tells the client after the items already sent; with none, items still held are dropped
   * (the client cancelled, or its connection is gone).
   */
  stop (s, frame) {
    if (!this.remove(s)) return
    s.ctx.cancel()
    s.producer?.cancel()
    s.input?.abandon(null)
    this.o.dispatcher.release(s.method, false, s.reserved, s.ctx.flow)
    s.ended(Status.REMOTE, ['stopped before its end (cancelled, deadline, drain or client gone)', 'STOPPED'], s.producer?.count ?? 0)
    if (frame !== null) s.out.push(frame)
    else s.out.close()
  }

  /**
   * The handler's side is over: done (err null) or failed. A handler that ends once its
   * deadline has passed (its signal aborted, and it returned) was cut by it: the stream ends
   * expired, never OK, so no reader takes a cut stream for a whole one. `expired`: the thread
   * that ran it says its deadline had passed (its own clock's verdict).
   */
  finish (s, err, count, expired = false) {
    if (!this.remove(s)) return
    s.ctx.done()
    s.input?.abandon(null)
    if (expired || s.ctx.expired) {
      this.o.dispatcher.release(s.method, false, s.reserved, s.ctx.flow)
      this.counts.expired++
      s.ended(Status.REMOTE, ['deadline passed', RemoteCode.EXPIRED], count)
      s.out.push(expiredEnd(s, count))
      return
    }
    this.o.dispatcher.release(s.method, err !== null, s.reserved, s.ctx.flow)
    if (err === null) {
      this.counts.ended++
      s.ended(Status.OK, null, count)
      s.out.push(encodeStreamEnd(s.id, Status.OK, null, count))
      return
    }
    this.counts.failed++
    const status = err?.code === DrainingError.code ? Status.DRAINING : Status.REMOTE
    const value = status === Status.DRAINING ? [err.message, null] : remoteValue(err)
    s.ended(status, value, count)
    s.out.push(encodeStreamEnd(s.id, status, value, count))
  }

  remove (s) {
    const streams = s.conn.streams
    if (streams?.get(s.id) !== s) return false
    streams.delete(s.id)
    if (streams.size === 0) s.conn.streams = null
    this.all.delete(s)
    this.waiting.delete(s)
    this.size--
    if (s.deadlineTimer !== null) this.o.clock.clearTimeout(s.deadlineTimer)
    return true
  }

  /**
   * While streams are open, once a second: a stream that waits (for credit, or for room to
   * send) and heard nothing from its client for streamIdleTimeout has lost its client (gone,
   * or partitioned) and ends. Clients say "still here" while a stream is open.
   */
  sweep () {
    if (this.sweeper !== null || this.size === 0) return
    this.sweeper = this.o.clock.setTimeout(() => {
      this.sweeper = null
      const now = this.o.clock.now()
      const limit = this.o.limits.streamIdleTimeout
      for (const s of [...this.all]) {
        if (limit > 0 && now - s.heardAt >= limit && ((s.producer?.blocked ?? false) || this.waiting.has(s) || s.out.bytes > 0)) { this.counts.silent++; this.stop(s, null) }
      }
      this.sweep()
    }, SWEEP_MS)
  }

  close () {
    this.endAll(null, null)
    if (this.sweeper !== null) this.o.clock.clearTimeout(this.sweeper)
    this.sweeper = null
  }
}

class PeerStream {
  constructor (msg, conn, ctx, reserved, now) {
    this.id = msg.id
    this.method = msg.method
    this.open = msg //       its STREAM_OPEN (credit, bulk), read when its handler starts, then let go
    this.conn = conn //      the connection it is open on (connections.js)
    this.ctx = ctx
    this.reserved = reserved // bytes of the peer's budget held for its input
    this.producer = null
    this.out = null //       its OrderedSender
    this.input = null //     a StreamConsumer of the client's items, for a request stream
    this.deadlineTimer = null
    this.heardAt = now //    when the client last sent something for it
  }

  /** Its end, as STREAM_END says it (`status`, `value`, `count`): its span and its diagnostics message (dispatch.js begin()) hear it. */
  ended (status, value, count) {
    this.ctx.traced?.endWith(status, value, count)
    if (this.ctx._diagnostics !== null) answered(channels.peerStream, this.ctx._diagnostics, status, value, count)
  }
}

/**
 * What a handler returned, as items: an async iterable as it is (also when a promise gives
 * one: an async function that returns a Readable), anything else (awaited) as one item.
 */
export function sourceOf (out) {
  if (isStream(out)) return out[Symbol.asyncIterator]()
  return (async function * one () {
    const value = await out
    if (isStream(value)) yield * value
    else if (value instanceof Values) yield * value.list // several results (4.2.3): each an item
    else yield value
  })()
}

/**
 * The end of a stream its deadline cut (PROTOCOL.md 4.10): REMOTE with code
 * ERR_ZEROMESH_EXPIRED and the count of items sent, whatever it was doing (producing, waiting
 * for credit, waiting for its handler's first item).
 */
function expiredEnd (s, count = s.producer?.count ?? 0) {
  return encodeStreamEnd(s.id, Status.REMOTE, [`the stream's deadline of ${s.ctx.timeoutMs} ms passed after ${count} items`, RemoteCode.EXPIRED], count)
}
