// A connecting ZeroMQ ROUTER that addresses each peer by its endpoint (a connect alias,
// settings.js): the client's socket, and a peer's outgoing membership socket. Reports a
// peer up on `handshake` and down on `disconnect`; sends never block. Socket settings, and
// why `immediate` is off, are in settings.js: callers only send to peers whose handshake
// completed and that have not disconnected since.
import * as zmq from 'zeromq'
import { connectingRouterOptions, Aliases } from './settings.js'

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
   */
  constructor (o) {
    this.o = o
    this.aliases = new Aliases()
    this.socket = new zmq.Router(connectingRouterOptions(o))
    // Events must be observed before the first connect(), or early ones are lost.
    const events = this.socket.events
    if (o.onUp) events.on('handshake', (e) => this.aliases.has(e.address) && o.onUp(e.address))
    if (o.onDown) events.on('disconnect', (e) => this.aliases.has(e.address) && o.onDown(e.address))
    this.closed = false // mirrors socket.closed without a native call per send
    this.loop = this.receiveLoop()
  }

  /** Connects to a peer; false when ZeroMQ refused the endpoint (never thrown). */
  connect (endpoint) {
    return this.aliases.connect(this.socket, endpoint) !== 'refused'
  }

  /** Stops talking to a peer; a later connect() makes a new connection. */
  disconnect (endpoint) {
    this.aliases.disconnect(this.socket, endpoint)
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
    if (!this.socket.closed) this.socket.close()
    await this.loop.catch(() => {})
  }
}
