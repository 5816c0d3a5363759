// How a stream is opened and how its messages read (PROTOCOL.md 4.10): the stream kind of the
// call lifecycle (client/calls.js). client.stream() hands the caller an async iterable of the
// items (ClientStream), read as they arrive within the window the client grants: a slow
// reader pauses the peer's handler, not memory, and credit goes back as the reader reads.
//
// The lifecycle treats a stream as any call until it commits: before its first item a
// refusal (busy, draining, unknown method) sends it to another peer, a lost connection moves
// an idempotent one and fails any other, exactly as for a request. Streams are never hedged.
// Once an item arrived (or items of a request stream were sent) the stream is committed to its
// peer: nothing is tried again, and it ends with a coded error carrying `items`, how many
// items arrived, so the caller can resume with a cursor in its args. The items that arrived
// before an error are read first. Beside the deadline (its `timeout`, none by default) a stream
// fails with TimeoutError when no item comes within idleTimeout while the reader waits.
import { StreamConsumer } from '../protocol/stream-consumer.js'
import { StreamProducer } from '../protocol/stream-producer.js'
import { OrderedSender } from '../transport/ordered-sender.js'
import { encodeStreamOpen, encodeStreamCredit, encodeStreamEnd } from '../protocol/stream-codec.js'
import { MessageType, Status, Accepts, Feature, STREAM_IDLE_MS } from '../protocol/constants.js'
import { TimeoutError, ConnectionLostError, UnknownMethodError, RemoteCode, invalidArgument } from '../protocol/errors.js'
import { channels } from '../runtime/diagnostics.js'

const KEEPALIVE_MS = STREAM_IDLE_MS / 3 // an open stream says "still here" this often (a peer waits STREAM_IDLE_MS by default)

export class Streams {
  /**
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {(ep: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send  the connector's send
   * @param {number} o.maxMessageSize
   * @param {{ sent(call, peer, code): void, find(id): object|undefined, ended(call, peer, r): void, answered(call, peer, err): void, fail(call, err): void, settle(call, err, value, quiet): void }} o.calls
   *   what it tells the lifecycle
   */
  constructor (o) {
    this.o = o
    this.noun = 'stream'
    this.channel = channels.clientStream // its diagnostics channel (runtime/diagnostics.js)
    this.needs = Feature.STREAMS
    this.since = '0.3.0' // the first release whose peers take streams
    this.measures = false // a stream's length is its handler's, not the peer's latency
    this.long = true
    this.counts = { started: 0, ok: 0, failed: 0, stray: 0, violations: 0 }
    this.open = new Set() // ClientStream of every stream not over, for the keepalive
    this.keepalive = null
    // What each stream uses of this side: the clock, the frame limit, and the two ways it ends its call.
    this.side = {
      clock: o.clock,
      maxMessageSize: o.maxMessageSize,
      fail: (call, err) => o.calls.fail(call, err),
      leave: (call) => o.calls.settle(call, null, undefined, true),
    }
  }

  /** A new stream's call: its ClientStream (call.owner) is what the caller iterates. */
  adopt (call, o) {
    const s = new ClientStream(this.side, call, o)
    call.owner = s
    this.open.add(s)
    s.armIdle()
    this.keepAlive()
    return s
  }

  pack (call, peer, remaining) {
    const s = call.owner
    let frame
    try {
      frame = encodeStreamOpen(call.id, call.method, call.args, remaining, s.window.items, s.window.bytes, s.source !== null, call.trace, Accepts.BULK, call.headers)
    } catch (err) {
      throw invalidArgument(`args of "${call.method}" could not be encoded: ${err?.message ?? err}`)
    }
    if (frame.length > this.o.maxMessageSize) throw invalidArgument(`stream "${call.method}" opens with ${frame.length} bytes, larger than maxMessageSize ${this.o.maxMessageSize}`)
    return frame
  }

  /** Opens the stream on `peer`: the whole window granted anew (nothing arrived from a peer before). */
  send (call, peer, frame) {
    const s = call.owner
    s.consumer.credit.items = s.window.items
    s.consumer.credit.bytes = s.window.bytes
    s.creditAt = this.o.clock.now()
    // After the open, the stream's frames to this peer (credit, its input, its end) leave in
    // order through one sender that holds them while the pipe is full.
    s.out = new OrderedSender({
      send: (frames, done) => this.o.send(peer.endpoint, frames, done),
      clock: this.o.clock,
      giveUpMs: s.idleTimeout > 0 ? s.idleTimeout : STREAM_IDLE_MS, // a full pipe that takes nothing this long ends it
      onDrain: () => s.input?.wake(),
      onFail: (code) => { if (call.peer === peer) this.o.calls.fail(call, new ConnectionLostError(`zeromesh: could not send to ${peer.endpoint} (${code}) after ${s.received} items of the stream "${call.method}"`)) },
    })
    this.o.send(peer.endpoint, [frame], (code) => this.o.calls.sent(call, peer, code))
  }

  copy () {
    return false // streams are never hedged
  }

  /** The attempt is over: what its sender held is of no use now. */
  detached (call) {
    const s = call.owner
    s.out?.close()
    s.out = null
  }

  /** A REPLY entry under a stream's id: not a stream's answer (a peer's mistake), dropped and counted. */
  answer () {
    this.counts.stray++
  }

  unroutable (message) {
    return new UnknownMethodError(message)
  }

  timedOut (call) {
    return new TimeoutError(`zeromesh: stream "${call.method}": no end within its timeout of ${call.timeout} ms`)
  }

  items (call) {
    return call.owner.received
  }

  /** The stream is over for its reader: the items before an error are read first; `err` carries how many arrived. */
  deliver (call, err) {
    const s = call.owner
    this.open.delete(s)
    s.over()
    if (this.open.size === 0 && this.keepalive !== null) { this.o.clock.clearTimeout(this.keepalive); this.keepalive = null }
    if (s.left) { s.consumer.abandon(null); return }
    if (err !== null) err.items = s.received
    s.consumer.end(err)
  }

  /** A stream message from `peer` (STREAM_ITEM, STREAM_CREDIT, STREAM_END); `bytes`: its size, bulk frames included. */
  onMessage (peer, msg, bytes) {
    const call = this.o.calls.find(msg.id)
    if (call === undefined || call.kind !== this || call.peer !== peer) { this.counts.stray++; return }
    const s = call.owner
    switch (msg.type) {
      case MessageType.STREAM_ITEM: {
        const broken = s.consumer.receive(msg.items, bytes)
        if (broken !== null) {
          this.counts.violations++
          return this.o.calls.fail(call, new ConnectionLostError(`zeromesh: ${peer.endpoint} broke the stream's credit rule (${broken})`))
        }
        call.committed = true
        s.armIdle()
        return
      }
      case MessageType.STREAM_CREDIT:
        return s.inputCredit(msg.items, msg.bytes)
      default: // STREAM_END: the peer's side is over
        if (msg.status === Status.OK && msg.count !== s.received) {
          call.answeredBy(peer.endpoint)
          return this.o.calls.answered(call, peer, new ConnectionLostError(`zeromesh: ${peer.endpoint} sent ${msg.count} items of "${call.method}", ${s.received} arrived`))
        }
        if (msg.status === Status.REMOTE && msg.code === RemoteCode.EXPIRED) {
          call.answeredBy(peer.endpoint)
          return this.o.calls.answered(call, peer, new TimeoutError(`zeromesh: stream "${call.method}": its deadline passed on ${peer.endpoint} after ${msg.count} items`))
        }
        return this.o.calls.ended(call, peer, msg)
    }
  }

  /** While streams are open, each says "still here" to its peer (STREAM_CREDIT 0, 0) when it granted nothing for KEEPALIVE_MS. */
  keepAlive () {
    if (this.keepalive !== null || this.open.size === 0) return
    this.keepalive = this.o.clock.setTimeout(() => {
      this.keepalive = null
      const now = this.o.clock.now()
      for (const s of this.open) if (s.call.peer !== null && now - s.creditAt >= KEEPALIVE_MS) s.sendCredit(0, 0)
      this.keepAlive()
    }, KEEPALIVE_MS)
  }
}

/** One stream as its caller holds it: an async iterable of its items, `for await` or `Readable.from`. */
export class ClientStream {
  /**
   * @param {{ clock: object, maxMessageSize: number, fail(call, err): void, leave(call): void }} side  what it uses of the stream kind
   * @param {import('./call.js').Call} call
   * @param {{ window: { items: number, bytes: number }, input: Iterable|AsyncIterable|null, idleTimeout: number }} o  its stream options
   */
  constructor (side, call, o) {
    this.side = side
    this.call = call
    this.window = o.window
    this.idleTimeout = o.idleTimeout
    this.source = o.input // the caller's items for a request stream, or null
    this.left = false //     the reader broke off
    this.idleTimer = null
    this.creditAt = 0
    this.input = null //     the StreamProducer of a request stream's items
    this.out = null //       the OrderedSender to the current attempt's peer
    this.consumer = new StreamConsumer({ ...o.window, grant: (items, bytes) => this.sendCredit(items, bytes), onRead: () => { if (this.idleTimer === null && !call.settled) this.armIdle() } })
  }

  /** Items that arrived so far. */
  get received () {
    return this.consumer.received
  }

  [Symbol.asyncIterator] () {
    return this
  }

  next () {
    return this.consumer.next()
  }

  /** The reader stopped (a `break` out of `for await`): the peer's handler is ended. */
  return (value) {
    this.leave()
    return Promise.resolve({ value, done: true })
  }

  throw (err) {
    this.leave()
    return Promise.reject(err)
  }

  leave () {
    if (this.call.settled) return
    this.left = true
    this.side.leave(this.call)
  }

  /** The stream is over: its timers stop and the caller's input is not read further (its finally runs). */
  over () {
    if (this.idleTimer !== null) this.side.clock.clearTimeout(this.idleTimer)
    this.idleTimer = null
    this.out?.close()
    this.input?.cancel()
  }

  /**
   * The idle timeout: no item for idleTimeout while the reader has read everything that came
   * (a reader that is behind holds the peer back on purpose, so that is not idleness).
   */
  armIdle () {
    const clock = this.side.clock
    if (this.idleTimer !== null) clock.clearTimeout(this.idleTimer)
    this.idleTimer = null
    const ms = this.idleTimeout
    if (ms === 0 || this.call.settled) return
    this.idleTimer = clock.setTimeout(() => {
      this.idleTimer = null
      const call = this.call
      if (this.consumer.buffered > 0) return // re-armed when the reader reads (onRead)
      if (call.waiting !== null && call.lastError !== null) return this.side.fail(call, call.lastError) // it never began: every peer was busy
      this.side.fail(call, new TimeoutError(`zeromesh: stream "${call.method}": ${this.received === 0
        ? `no item within ${ms} ms${call.tried.length === 0 ? ' (no peer took it)' : ` (tried ${call.tried.join(', ')})`}`
        : `no item within ${ms} ms after item ${this.received}`}`))
    }, ms)
  }

  sendCredit (items, bytes) {
    if (this.out === null) return
    this.creditAt = this.side.clock.now()
    this.out.push(encodeStreamCredit(this.call.id, items, bytes))
  }

  /** The peer grants credit for a request stream's items: the first grant starts sending them. */
  inputCredit (items, bytes) {
    if (this.source === null) return
    if (this.input !== null) { this.input.grant(items, bytes); return }
    const call = this.call
    const peer = call.peer
    const out = this.out
    const send = (frame) => { if (call.peer === peer) out.push(frame) }
    const src = this.source
    call.committed = true // items of the caller's input cannot be sent twice
    const max = this.side.maxMessageSize
    this.input = new StreamProducer({
      id: call.id,
      source: typeof src[Symbol.asyncIterator] === 'function' ? src[Symbol.asyncIterator]() : src[Symbol.iterator](),
      items,
      bytes,
      maxFrame: max,
      send,
      room: () => out.bytes < max,
      end: (err, count) => send(err === null
        ? encodeStreamEnd(call.id, Status.OK, null, count)
        : encodeStreamEnd(call.id, Status.REMOTE, [err instanceof Error ? err.message : String(err), typeof err?.code === 'string' ? err.code : null], count)),
    })
    this.input.start()
  }
}
