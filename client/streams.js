// The client's streams (PROTOCOL.md 4.10): client.stream() opens one on a peer that serves the
// method and says it takes streams, and hands the caller an async iterable of the items.
// Items are read as they arrive, within the window the client grants (a slow reader pauses
// the peer's handler, not memory); credit goes back as the reader reads.
//
// Failure rules. Before the first item a stream fails over as a request does: a peer that
// refuses (busy, draining, unknown method) is left for another at once, a lost connection
// moves an idempotent stream elsewhere and fails a non-idempotent one. Streams are never
// hedged. After the first item (or once items of a request stream were sent) nothing is
// tried again: the stream ends with a coded error carrying `items`, how many items arrived,
// so the caller can resume with a cursor in its args. The items that arrived before an error
// are read first. A stream fails with TimeoutError when no item comes within idleTimeout while
// the reader waits for one, or when its whole timeout passes.
import { StreamConsumer } from '../protocol/stream-consumer.js'
import { StreamProducer } from '../protocol/stream-producer.js'
import { OrderedSender } from '../transport/ordered-sender.js'
import { encodeStreamOpen, encodeStreamCredit, encodeStreamEnd } from '../protocol/stream-codec.js'
import { encodeCancel } from '../protocol/codec.js'
import { MessageType, Status, Accepts } from '../protocol/constants.js'
import {
  TimeoutError, NoPeersError, UnknownMethodError, remoteError, BusyError, DrainingError,
  ConnectionLostError, AbortError, RemoteCode, invalidArgument,
} from '../protocol/errors.js'
import { Kind } from './call-path.js'

const KEEPALIVE_MS = 10000 // an open stream says "still here" this often (a peer waits 30 s by default)
const GIVE_UP_MS = 30000 //   a full pipe that takes nothing this long ends a stream with no idle timeout

export class ClientStreams {
  /**
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {{ send(ep, frames, done): void }} o.transport
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {import('./call-path.js').CallPath} o.path            where each attempt goes
   * @param {import('./capacity.js').CapacityWait} o.capacity     streams refused busy wait here
   * @param {import('./tracing.js').ClientTracing} o.tracing
   * @param {{ failed: object }} o.counts   the client's counters (failures by code)
   * @param {number} o.maxMessageSize
   * @param {(peer, method: string) => void} o.notServing  a peer answered UNKNOWN_METHOD
   */
  constructor (o) {
    this.o = o
    this.open = new Map() // id -> ClientStream, from open to end
    this.waiting = new Set() // streams with no peer to take them yet
    this.keepalive = null
    this.counts = { opened: 0, ok: 0, failed: 0, failovers: 0, stray: 0, violations: 0 }
    // What each stream uses of this side: the options above, the stream counters, and the
    // call that forgets it when it is over.
    this.streamSide = { o, counts: this.counts, closed: (s) => this.closed(s) }
    // Streams refused busy before their first item by every peer that may take them wait for
    // a place, as requests do (capacity.js).
    this.waitingStreams = {
      fits: (s, peer) => o.path.fits(s, Kind.STREAM, peer),
      pick: (s) => o.path.open(s, Kind.STREAM),
      fail: (s, err) => s.fail(err),
      hand: (s, peer) => { s.tried = []; this.attempt(s, peer) },
      expire: (s, why) => s.fail(new BusyError(`zeromesh: the stream "${s.method}" cannot start before its deadline: ${why}`)),
    }
  }

  /** A new stream (client.stream); its first attempt is made at once. */
  start (id, method, args, o) {
    const s = new ClientStream(this.streamSide, id, method, args, o)
    this.open.set(id, s)
    this.counts.opened++
    this.o.tracing.start(s)
    if (o.signal?.aborted) { s.fail(s.abortError()); return s }
    if (o.timeout > 0) {
      s.deadlineTimer = this.o.clock.setTimeout(() => {
        s.deadlineTimer = null
        // One that never began because every peer was busy fails busy, as a request does.
        s.fail(s.waiting !== null && s.lastError !== null ? s.lastError : s.timedOut(`no end within its timeout of ${o.timeout} ms`))
      }, o.timeout)
    }
    if (o.signal !== undefined) {
      s.onAbort = () => s.fail(s.abortError())
      o.signal.addEventListener('abort', s.onAbort, { once: true })
    }
    s.armIdle()
    this.dispatch(s)
    this.keepAlive()
    return s
  }

  /** Opens the stream's next attempt where the call path says (call-path.js), or makes it wait. */
  dispatch (s) {
    if (s.over) return
    const c = this.o
    const d = c.path.route(s, Kind.STREAM)
    if (d.peer !== undefined) return this.attempt(s, d.peer)
    if (d.park) return this.waiting.add(s) // until a peer that may take it is up (routesChanged), or the idle timeout
    if (d.capacity) {
      if (!c.capacity.add(s, this.waitingStreams)) s.fail(new BusyError(`zeromesh: the stream "${s.method}" cannot start before its deadline: ${c.capacity.size} calls wait ahead of it for the peers' capacity`))
      return
    }
    if (d.exhausted) return s.fail(s.lastError ?? new NoPeersError(`zeromesh: every peer tried refused the stream "${s.method}"`))
    s.fail(d.error)
  }

  attempt (s, peer) {
    const c = this.o
    let frame
    try {
      frame = encodeStreamOpen(s.id, s.method, s.args, s.o.timeout > 0 ? Math.max(1, Math.ceil(s.deadline - c.clock.now())) : 0, s.o.window.items, s.o.window.bytes, s.o.input !== null, s.trace, Accepts.BULK, s.o.headers)
    } catch (err) {
      return s.fail(invalidArgument(`args of "${s.method}" could not be encoded: ${err?.message ?? err}`))
    }
    if (frame.length > c.maxMessageSize) return s.fail(invalidArgument(`stream "${s.method}" opens with ${frame.length} bytes, larger than maxMessageSize ${c.maxMessageSize}`))
    if (s.attempts > 0) this.counts.failovers++
    s.attempts++
    s.tried.push(peer.endpoint)
    if (s.span !== null) c.tracing.attempt(s, peer.endpoint, false)
    s.peer = peer
    s.consumer.credit.items = s.o.window.items // a new peer gets the whole window (nothing arrived from the last)
    s.consumer.credit.bytes = s.o.window.bytes
    s.creditAt = c.clock.now()
    s.out?.close()
    // After the open, the stream's frames to this peer (credit, its input, its end) leave in
    // order through one sender that holds them while the pipe is full.
    s.out = new OrderedSender({
      send: (frames, done) => c.transport.send(peer.endpoint, frames, done),
      clock: c.clock,
      giveUpMs: s.o.idleTimeout > 0 ? s.o.idleTimeout : GIVE_UP_MS,
      onDrain: () => s.input?.wake(),
      onFail: (code) => { if (s.peer === peer) s.fail(s.with(new ConnectionLostError(`zeromesh: could not send to ${peer.endpoint} (${code}) after ${s.consumer.received} items of the stream "${s.method}"`))) },
    })
    c.transport.send(peer.endpoint, [frame], (code) => {
      if (code === null || s.over || s.peer !== peer) return
      s.lastError = new NoPeersError(`zeromesh: could not send the stream "${s.method}" to ${peer.endpoint} (${code})`)
      this.elsewhere(s)
    })
  }

  /** The attempt on s.peer was not taken: another peer, if the stream may still move. */
  elsewhere (s) {
    s.peer = null
    if (s.committed) return s.fail(s.lastError)
    this.dispatch(s)
  }

  /** A stream message from `endpoint` (STREAM_ITEM, STREAM_CREDIT, STREAM_END); `bytes`: its size, bulk frames included. */
  onMessage (endpoint, msg, bytes) {
    const s = this.open.get(msg.id)
    if (s === undefined || s.peer === null || s.peer.endpoint !== endpoint) { this.counts.stray++; return }
    switch (msg.type) {
      case MessageType.STREAM_ITEM: {
        const broken = s.consumer.receive(msg.items, bytes)
        if (broken !== null) {
          this.counts.violations++
          return s.fail(s.with(new ConnectionLostError(`zeromesh: ${endpoint} broke the stream's credit rule (${broken})`)))
        }
        s.committed = true
        s.armIdle()
        return
      }
      case MessageType.STREAM_CREDIT:
        return s.inputCredit(msg.items, msg.bytes)
      default: // STREAM_END
        return this.ended(s, msg)
    }
  }

  /** The peer's side of `s` is over. */
  ended (s, msg) {
    const peer = s.peer
    const where = peer.endpoint
    const received = s.consumer.received
    const refused = msg.status === Status.BUSY || msg.status === Status.DRAINING || msg.status === Status.UNKNOWN_METHOD
    if (!refused && peer.busy) queueMicrotask(() => this.o.capacity.freed(peer)) // its place there is free (after this stream's end is read)
    if (msg.status === Status.OK) {
      if (msg.count !== received) return s.fail(s.with(new ConnectionLostError(`zeromesh: ${where} sent ${msg.count} items of "${s.method}", ${received} arrived`)))
      return s.finish()
    }
    if (refused && !s.committed && received === 0) {
      // The handler never ran: another peer, whatever the stream's idempotency.
      if (msg.status === Status.DRAINING) { this.o.table.setState(peer, 'draining', 'draining'); s.lastError = new DrainingError(`zeromesh: every peer tried was draining (last: ${where})`) }
      if (msg.status === Status.BUSY) {
        this.o.table.recordFailure(peer, 'busy')
        this.o.capacity.saturated(peer, s.probe === peer)
        s.probe = null
        s.lastError = new BusyError(`zeromesh: every peer tried was busy (last: ${where}: ${msg.message})`)
      }
      if (msg.status === Status.UNKNOWN_METHOD) { this.o.notServing(peer, s.method); s.lastError = new UnknownMethodError(msg.message) }
      s.peer = null
      return this.dispatch(s)
    }
    s.peer = null // nothing to cancel there
    if (msg.status === Status.DRAINING) return s.fail(s.with(new DrainingError(`zeromesh: ${where} stopped while the stream "${s.method}" was open, after ${received} items: resume elsewhere`)))
    if (msg.status === Status.REMOTE && msg.code === RemoteCode.EXPIRED) return s.fail(s.timedOut(`its deadline passed on ${where} after ${msg.count} items`))
    if (msg.status === Status.REMOTE) return s.fail(s.with(remoteError(msg.message, msg.code, msg.issues)))
    if (msg.status === Status.INVALID_REQUEST) return s.fail(s.with(invalidArgument(`peer ${where} refused the stream: ${msg.message}`)))
    if (msg.status === Status.BUSY) return s.fail(s.with(new BusyError(`zeromesh: ${where}: ${msg.message}`)))
    return s.fail(s.with(new UnknownMethodError(msg.message)))
  }

  /** `peer` is gone or down: its streams move (before their first item, idempotent) or end. */
  peerLost (peer, notTaken) {
    for (const s of [...this.open.values()]) {
      if (s.peer !== peer) continue
      if (!s.committed && s.consumer.received === 0 && (notTaken || s.o.idempotent)) {
        s.lastError = new NoPeersError(`zeromesh: lost ${peer.endpoint} before the stream "${s.method}" began`)
        this.elsewhere(s)
        continue
      }
      s.peer = null
      s.fail(s.with(new ConnectionLostError(`zeromesh: the connection to ${peer.endpoint} was lost after ${s.consumer.received} items of the stream "${s.method}"`)))
    }
  }

  /** Peers changed: streams waiting for one look again. */
  routesChanged () {
    if (this.waiting.size === 0) return
    const w = [...this.waiting]
    this.waiting.clear()
    for (const s of w) this.dispatch(s)
  }

  /** While streams are open, each says "still here" to its peer (STREAM_CREDIT 0, 0) when it granted nothing for KEEPALIVE_MS. */
  keepAlive () {
    if (this.keepalive !== null || this.open.size === 0) return
    this.keepalive = this.o.clock.setTimeout(() => {
      this.keepalive = null
      const now = this.o.clock.now()
      for (const s of this.open.values()) if (s.peer !== null && now - s.creditAt >= KEEPALIVE_MS) s.sendCredit(0, 0)
      this.keepAlive()
    }, KEEPALIVE_MS)
  }

  /** `s` is over: forgotten, its peer told if it still works on it. */
  closed (s) {
    this.open.delete(s.id)
    this.waiting.delete(s)
    if (s.waiting !== null) this.o.capacity.delete(s)
    if (this.open.size === 0 && this.keepalive !== null) { this.o.clock.clearTimeout(this.keepalive); this.keepalive = null }
  }

  close (err) {
    for (const s of [...this.open.values()]) s.fail(err)
  }
}

/** One stream as its caller holds it: an async iterable of its items, `for await` or `Readable.from`. */
export class ClientStream {
  /**
   * @param {{ o: object, counts: { ok: number, failed: number }, closed: (s: ClientStream) => void }} mgr
   *   what it uses of ClientStreams: its options (clock, transport, tracing, counts, maxMessageSize), the stream counters, and closed()
   */
  constructor (mgr, id, method, args, o) {
    this.mgr = mgr
    this.id = id
    this.method = method
    this.args = args
    this.o = o
    this.idempotent = o.idempotent // as a strategy reads a call
    this.version = o.version //       and as the call path reads one (call-path.js)
    this.where = o.where
    this.key = o.key
    this.deadline = o.timeout > 0 ? mgr.o.clock.now() + o.timeout : Infinity
    this.peer = null //      PeerEntry of the current attempt
    this.tried = []
    this.attempts = 0
    this.committed = false // an item arrived, or items were sent: no other peer from now on
    this.over = false
    this.lastError = null
    this.waiting = null // its place among the calls waiting for capacity (capacity.js), while it waits
    this.waited = false
    this.probe = null
    this.deadlineTimer = null
    this.idleTimer = null
    this.onAbort = null
    this.creditAt = 0
    this.input = null // the StreamProducer of a request stream's items
    this.out = null //   the OrderedSender to the current attempt's peer
    this.span = null //  its CLIENT span, when traced (client/tracing.js)
    this.trace = null // the trace field its open carries
    this.consumer = new StreamConsumer({ ...o.window, grant: (items, bytes) => this.sendCredit(items, bytes), onRead: () => { if (this.idleTimer === null && !this.over) this.armIdle() } })
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
    if (!this.over) this.fail(null)
    return Promise.resolve({ value, done: true })
  }

  throw (err) {
    if (!this.over) this.fail(null)
    return Promise.reject(err)
  }

  /** Ends the stream now for the reader with `err`, or silently (null: the reader left). */
  fail (err) {
    if (this.over) return
    this.over = true
    const c = this.mgr.o
    this.out?.close() // what it held is of no use now; the cancel goes at once
    if (this.peer !== null && this.peer.connected) c.transport.send(this.peer.endpoint, [encodeCancel([this.id])], () => {})
    this.peer = null
    this.input?.cancel()
    this.cleanup()
    if (this.span !== null) c.tracing.end(this, err, this.consumer.received)
    if (err === null) { this.consumer.abandon(null); return }
    this.mgr.counts.failed++
    c.counts.failed[err.code] = (c.counts.failed[err.code] ?? 0) + 1
    this.consumer.end(err) // the items before it are read first
  }

  finish () {
    if (this.over) return
    this.over = true
    this.peer = null
    this.mgr.counts.ok++
    this.cleanup()
    if (this.span !== null) this.mgr.o.tracing.end(this, null, this.consumer.received)
    this.consumer.end(null)
  }

  cleanup () {
    const clock = this.mgr.o.clock
    this.out?.close()
    this.input?.cancel() // the peer's side is over: the caller's input is not read further (its finally runs)
    if (this.deadlineTimer !== null) clock.clearTimeout(this.deadlineTimer)
    if (this.idleTimer !== null) clock.clearTimeout(this.idleTimer)
    this.deadlineTimer = this.idleTimer = null
    if (this.onAbort !== null) this.o.signal.removeEventListener('abort', this.onAbort)
    this.mgr.closed(this)
  }

  /**
   * The idle timeout: no item for idleTimeout while the reader has read everything that came
   * (a reader that is behind holds the peer back on purpose, so that is not idleness).
   */
  armIdle () {
    const clock = this.mgr.o.clock
    if (this.idleTimer !== null) clock.clearTimeout(this.idleTimer)
    this.idleTimer = null
    const ms = this.o.idleTimeout
    if (ms === 0 || this.over) return
    this.idleTimer = clock.setTimeout(() => {
      this.idleTimer = null
      if (this.consumer.buffered > 0) return // re-armed when the reader reads (onRead)
      if (this.waiting !== null && this.lastError !== null) return this.fail(this.lastError) // it never began: every peer was busy
      this.fail(this.timedOut(this.consumer.received === 0
        ? `no item within ${ms} ms${this.tried.length === 0 ? ' (no peer took it)' : ` (tried ${this.tried.join(', ')})`}`
        : `no item within ${ms} ms after item ${this.consumer.received}`))
    }, ms)
  }

  sendCredit (items, bytes) {
    if (this.peer === null) return
    this.creditAt = this.mgr.o.clock.now()
    this.out.push(encodeStreamCredit(this.id, items, bytes))
  }

  /** The peer grants credit for a request stream's items: the first grant starts sending them. */
  inputCredit (items, bytes) {
    if (this.o.input === null) return
    if (this.input !== null) { this.input.grant(items, bytes); return }
    const peer = this.peer
    const out = this.out
    const send = (frame) => { if (this.peer === peer) out.push(frame) }
    const src = this.o.input
    this.committed = true // items of the caller's input cannot be sent twice
    this.input = new StreamProducer({
      id: this.id,
      source: typeof src[Symbol.asyncIterator] === 'function' ? src[Symbol.asyncIterator]() : src[Symbol.iterator](),
      items,
      bytes,
      maxFrame: this.mgr.o.maxMessageSize,
      send,
      room: () => out.bytes < this.mgr.o.maxMessageSize,
      end: (err, count) => send(err === null
        ? encodeStreamEnd(this.id, Status.OK, null, count)
        : encodeStreamEnd(this.id, Status.REMOTE, [err instanceof Error ? err.message : String(err), typeof err?.code === 'string' ? err.code : null], count)),
    })
    this.input.start()
  }

  /** `err` with how many items arrived, for resuming. */
  with (err) {
    err.items = this.consumer.received
    return err
  }

  timedOut (what) {
    return this.with(new TimeoutError(`zeromesh: stream "${this.method}": ${what}`))
  }

  abortError () {
    return this.with(new AbortError(`zeromesh: stream "${this.method}" was aborted`, { cause: this.o.signal?.reason }))
  }
}
