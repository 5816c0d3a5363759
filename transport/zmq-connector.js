// A connecting ZeroMQ ROUTER that addresses each peer by its endpoint (a connect alias,
// settings.js): the client's socket, and a peer's outgoing membership socket. Reports a
// peer up on `handshake` and down on `disconnect`; sends never block. Socket settings, and
// why `immediate` is off, are in settings.js: callers only send to peers whose handshake
// completed and that have not disconnected since.
import * as zmq from 'zeromq'
import { connectingRouterOptions, Aliases } from './settings.js'
import { clientCurveOptions } from './security.js'

const RECONNECT_AFTER_REFUSAL_MS = 1000 //  a refused handshake is tried again after this...
const MAX_RECONNECT_AFTER_REFUSAL_MS = 30000 // ...doubling up to this, while the endpoint is wanted

export class ZmqConnector {
  /**
   * @param {object} o
   * @param {number} o.maxMessageSize
   * @param {number} o.heartbeatInterval
   * @param {number} o.heartbeatTimeout
   * @param {number} [o.sendHighWaterMark]
   * @param {number} [o.receiveHighWaterMark]
   * @param {(endpoint: string, frames: Buffer[]) => void} o.onMessage
   * @param {(endpoint: string) => void} [o.onUp]
   * @param {(endpoint: string) => void} [o.onDown]
   * @param {{ serverKey: string, publicKey: string, secretKey: string }|null} [o.credentials]
   *   CURVE: the key every peer proves it holds, and this side's own keypair
   * @param {(endpoint: string, refusal: { kind: string, code: string|null }) => void} [o.onRefused]
   *   a handshake failed: kind 'auth' (the peer's ZAP handler refused this key), 'protocol'
   *   (mechanisms or keys do not match) or 'other' (the peer hung up mid-handshake)
   */
  constructor (o) {
    this.o = o
    this.aliases = new Aliases()
    this.socket = new zmq.Router({ ...connectingRouterOptions(o), ...(o.credentials ? clientCurveOptions(o.credentials) : {}) })
    this.refusals = new Map() // endpoint -> { delay, timer } of endpoints whose handshake was refused
    // Events must be observed before the first connect(), or early ones are lost.
    const events = this.socket.events
    events.on('handshake', (e) => {
      if (!this.aliases.has(e.address)) return
      this.forgive(e.address)
      o.onUp?.(e.address)
    })
    if (o.onDown) events.on('disconnect', (e) => this.aliases.has(e.address) && o.onDown(e.address))
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
    this.aliases.disconnect(this.socket, endpoint)
  }

  /**
   * A handshake with `endpoint` failed. After a refusal by the peer's ZAP handler or a
   * protocol mismatch libzmq never tries that connection again (zmq-facts 6), so it is made
   * anew after a pause, 1 s doubling to 30 s: a key added to the allow-list later gets in
   * without a restart. Other failures libzmq retries itself.
   */
  refusedBy (endpoint, kind, error, redial) {
    if (!this.aliases.has(endpoint)) return
    this.o.onRefused?.(endpoint, { kind, code: error?.code ?? null })
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
        try { this.o.onMessage(endpoint, msg.slice(1)) } catch { /* onMessage handles its own errors */ }
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
    this.socket.send([alias, ...frames]).then(() => done(null), (err) => done(err?.code ?? 'ERROR'))
  }

  async close () {
    this.closed = true
    for (const r of this.refusals.values()) if (r.timer !== null) clearTimeout(r.timer)
    this.refusals.clear()
    if (!this.socket.closed) this.socket.close()
    await this.loop.catch(() => {})
  }
}
