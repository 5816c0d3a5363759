// A connecting ZeroMQ ROUTER that addresses each peer by its endpoint (a connect alias,
// settings.js): the client's socket, and a peer's outgoing membership socket. Reports a
// peer up on `handshake` and down on `disconnect`, or when it went silent (heartbeats.js:
// PINGs of the protocol, never ZMTP's); sends never block. Socket settings, and why
// `immediate` is off, are in settings.js: callers only send to peers whose handshake
// completed and that have not disconnected since.
import * as zmq from 'zeromq'
import { connectingRouterOptions, Aliases } from './settings.js'
import { clientCurveOptions } from './security.js'
import { Heartbeats, HEARTBEAT_PING, heartbeatAnswer } from './heartbeats.js'
import { systemClock } from '../runtime/clock.js'

const RECONNECT_AFTER_REFUSAL_MS = 1000 //  a refused handshake is tried again after this...
const MAX_RECONNECT_AFTER_REFUSAL_MS = 30000 // ...doubling up to this, while the endpoint is wanted

export class ZmqConnector {
  /**
   * @param {object} o
   * @param {number} o.maxMessageSize
   * @param {number} o.heartbeatInterval  a silent connection gets a PING this often (0: never)
   * @param {number} o.heartbeatTimeout   one silent this long is dropped (onDown) and dialled again
   * @param {number} [o.sendHighWaterMark]
   * @param {number} [o.receiveHighWaterMark]
   * @param {(endpoint: string, frames: Buffer[]) => void} o.onMessage
   * @param {(endpoint: string) => void} [o.onUp]
   * @param {(endpoint: string) => void} [o.onDown]
   * @param {(endpoint: string, meta: object) => void} [o.onHeartbeat]  a heartbeat's PONG came: its meta (PROTOCOL.md 4.4)
   * @param {{ serverKey: string, publicKey: string, secretKey: string }|null} [o.credentials]
   *   CURVE: the key every peer proves it holds, and this side's own keypair
   * @param {(endpoint: string, refusal: { kind: string, code: string|null, elapsedMs: number|null }) => void} [o.onRefused]
   *   a handshake failed: kind 'auth' (the peer's ZAP handler refused this key), 'protocol'
   *   (mechanisms or keys do not match) or 'other' (the peer hung up mid-handshake);
   *   `elapsedMs`: how long after the TCP connection it failed (null when unknown)
   */
  constructor (o) {
    this.o = o
    this.aliases = new Aliases()
    this.socket = new zmq.Router({ ...connectingRouterOptions(o), ...(o.credentials ? clientCurveOptions(o.credentials) : {}) })
    this.refusals = new Map() // endpoint -> { delay, timer } of endpoints whose handshake was refused
    this.connectedAt = new Map() // endpoint -> when its latest TCP connection was made (a handshake's start)
    // Events must be observed before the first connect(), or early ones are lost.
    const events = this.socket.events
    this.heartbeats = o.heartbeatInterval > 0
      ? new Heartbeats({ interval: o.heartbeatInterval, timeout: o.heartbeatTimeout, clock: systemClock, ping: (ep) => this.ping(ep), silent: (ep) => this.silent(ep) })
      : null
    events.on('connect', (e) => { if (this.aliases.has(e.address)) this.connectedAt.set(e.address, systemClock.now()) })
    events.on('handshake', (e) => {
      if (!this.aliases.has(e.address)) return
      this.connectedAt.delete(e.address)
      this.forgive(e.address)
      this.heartbeats?.up(e.address)
      o.onUp?.(e.address)
    })
    events.on('disconnect', (e) => {
      if (!this.aliases.has(e.address)) return
      this.heartbeats?.down(e.address)
      o.onDown?.(e.address)
    })
    events.on('handshake:error:auth', (e) => this.refusedBy(e.address, 'auth', e.error, true))
    events.on('handshake:error:protocol', (e) => this.refusedBy(e.address, 'protocol', e.error, true))
    events.on('handshake:error:other', (e) => this.refusedBy(e.address, 'other', e.error, false))
    this.closed = false // mirrors socket.closed without a native call per send
    this.loop = this.receiveLoop()
  }

  /** Connects to a peer; false when ZeroMQ refused the endpoint (never thrown). */
  connect (endpoint) {
    return this.aliases.connect(this.socket, endpoint) !== 'refused'
  }

  /** Stops talking to a peer; a later connect() makes a new connection. */
  disconnect (endpoint) {
    this.forgive(endpoint)
    this.connectedAt.delete(endpoint)
    this.heartbeats?.down(endpoint)
    this.aliases.disconnect(this.socket, endpoint)
  }

  ping (endpoint) {
    const alias = this.aliases.aliasOf(endpoint)
    if (this.closed || alias === undefined) return
    // A full pipe, or a send refused at once (zeromq.js can throw synchronously): the silence
    // says the rest. Nothing may escape into the timer that called this.
    try { this.socket.send([alias, HEARTBEAT_PING]).catch(() => {}) } catch {}
  }

  /** Nothing came from `endpoint` for heartbeatTimeout: down, and a new connection is made. */
  silent (endpoint) {
    if (this.closed || !this.aliases.has(endpoint)) return
    this.aliases.disconnect(this.socket, endpoint)
    this.aliases.connect(this.socket, endpoint)
    this.o.onDown?.(endpoint)
  }

  /**
   * A handshake with `endpoint` failed. After a refusal by the peer's ZAP handler or a
   * protocol mismatch libzmq never tries that connection again (zmq-facts 6), so it is made
   * anew after a pause, 1 s doubling to 30 s: a key added to the allow-list later gets in
   * without a restart. Other failures libzmq retries itself.
   */
  refusedBy (endpoint, kind, error, redial) {
    if (!this.aliases.has(endpoint)) return
    const at = this.connectedAt.get(endpoint)
    this.connectedAt.delete(endpoint)
    this.o.onRefused?.(endpoint, { kind, code: error?.code ?? null, elapsedMs: at === undefined ? null : systemClock.now() - at })
    if (!redial || this.closed) return
    let r = this.refusals.get(endpoint)
    if (r === undefined) this.refusals.set(endpoint, r = { delay: RECONNECT_AFTER_REFUSAL_MS, timer: null })
    if (r.timer !== null) return
    r.timer = setTimeout(() => {
      r.timer = null
      if (this.closed || !this.aliases.has(endpoint)) return
      this.aliases.disconnect(this.socket, endpoint)
      this.aliases.connect(this.socket, endpoint)
    }, r.delay)
    r.timer.unref?.()
    r.delay = Math.min(MAX_RECONNECT_AFTER_REFUSAL_MS, r.delay * 2)
  }

  forgive (endpoint) {
    const r = this.refusals.get(endpoint)
    if (r === undefined) return
    if (r.timer !== null) clearTimeout(r.timer)
    this.refusals.delete(endpoint)
  }

  // receive() awaited directly: zeromq.js's async iterator adds a promise, two microtask
  // hops and a native `closed` read to every message.
  async receiveLoop () {
    const s = this.socket
    try {
      while (!this.closed) {
        const msg = await s.receive()
        const endpoint = this.aliases.endpointOf(msg[0])
        if (endpoint === undefined) continue
        if (this.heartbeats !== null) {
          this.heartbeats.heard(endpoint)
          const beat = msg.length === 2 ? heartbeatAnswer(msg[1]) : null
          if (beat !== null) { this.o.onHeartbeat?.(endpoint, beat); continue }
        }
        msg.shift() // the alias: what is left are the frames, without a copy of the array
        try { this.o.onMessage(endpoint, msg) } catch { /* onMessage handles its own errors */ }
        // The callers whose requests this message settled run first (and send their next
        // requests); only then is ZeroMQ asked for the next message, which costs a system
        // call when none is waiting.
        await null
      }
    } catch (err) {
      if (!s.closed) throw err
    }
  }

  /**
   * Sends one message to a peer. `done(code)` is called once, asynchronously: with null when
   * ZeroMQ took the message, or with 'EHOSTUNREACH' (not connected), 'EAGAIN' (pipe full)
   * or another error code.
   */
  send (endpoint, frames, done) {
    const alias = this.aliases.aliasOf(endpoint)
    if (this.closed || alias === undefined) { queueMicrotask(() => done(this.closed ? 'CLOSED' : 'EHOSTUNREACH')); return }
    this.socket.send(frames.length === 1 ? [alias, frames[0]] : [alias, ...frames]).then(() => done(null), (err) => done(err?.code ?? 'ERROR'))
  }

  async close () {
    this.closed = true
    this.heartbeats?.stop()
    for (const r of this.refusals.values()) if (r.timer !== null) clearTimeout(r.timer)
    this.refusals.clear()
    if (!this.socket.closed) this.socket.close()
    await this.loop.catch(() => {})
  }
}
