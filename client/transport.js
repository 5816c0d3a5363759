// The client's ZeroMQ ROUTER socket, connected to every known peer and addressing each by
// its endpoint (a connect alias). Reports a peer up on `handshake` and down on `disconnect`;
// sends never block. Only this file of client/ imports zeromq.
//
// Why `immediate: false`: with `immediate: true` libzmq terminates a connection's pipe the
// moment the connection drops, discarding replies that arrived but were not read yet, so a
// peer that answers and then closes (a graceful stop) loses replies. With `immediate: false`
// the pipe outlives the connection and every reply that arrived is read. The price, messages
// to a disconnected peer being queued instead of refused, is paid by the peer table: the
// client only sends to peers whose handshake completed and that have not disconnected since.
import process from 'node:process'
import * as zmq from 'zeromq'

export class ClientTransport {
  /**
   * @param {object} o
   * @param {number} o.maxMessageSize
   * @param {number} o.heartbeatInterval
   * @param {number} o.heartbeatTimeout
   * @param {(endpoint: string, frames: Buffer[]) => void} o.onMessage
   * @param {(endpoint: string) => void} o.onUp
   * @param {(endpoint: string) => void} o.onDown
   */
  constructor (o) {
    this.o = o
    this.connected = new Set()
    this.socket = new zmq.Router({
      linger: 0, //         never hang the process at exit (zmq-facts 2)
      mandatory: true, //   a send to an unknown peer fails (EHOSTUNREACH) instead of vanishing
      immediate: false, //  keep each peer's pipe across reconnects (see above)
      sendTimeout: 0, //    sends never block: a full pipe is EAGAIN at once
      maxMessageSize: o.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval, // a frozen peer is disconnected after
      heartbeatTimeout: o.heartbeatTimeout, //   heartbeatTimeout of silence
      heartbeatTimeToLive: o.heartbeatTimeout,
      handshakeInterval: 5000, // a peer that accepts TCP but never handshakes is dropped
      reconnectInterval: 100,
      reconnectMaxInterval: 2000,
      sendHighWaterMark: 10000,
      receiveHighWaterMark: 10000,
    })
    // Events must be observed before the first connect(), or early ones are lost.
    const events = this.socket.events
    events.on('handshake', (e) => this.connected.has(e.address) && o.onUp(e.address))
    events.on('disconnect', (e) => this.connected.has(e.address) && o.onDown(e.address))
    this.loop = this.receiveLoop()
  }

  connect (endpoint) {
    if (this.connected.has(endpoint)) return
    this.connected.add(endpoint)
    withoutAliasWarning(() => this.socket.connect(endpoint, { routingId: endpoint }))
  }

  async receiveLoop () {
    const s = this.socket
    try {
      for await (const msg of s) {
        const endpoint = msg[0].toString()
        try { this.o.onMessage(endpoint, msg.slice(1)) } catch { /* onMessage handles its own errors */ }
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
    if (this.socket.closed) { queueMicrotask(() => done('CLOSED')); return }
    this.socket.send([endpoint, ...frames]).then(() => done(null), (err) => done(err?.code ?? 'ERROR'))
  }

  async close () {
    if (!this.socket.closed) this.socket.close()
    await this.loop.catch(() => {})
  }
}

// zeromq.js sets ZMQ_CONNECT_ROUTING_ID (which applies to the next connect, as intended) and
// then warns that an option set after an earlier connect "will not take effect". The warning
// is wrong for this option; this silences that one message during the call and no other.
const ALIAS_WARNING = 'Socket option will not take effect until next connect/bind'
function withoutAliasWarning (fn) {
  const emit = process.emitWarning
  process.emitWarning = function (warning, ...rest) {
    if (String(warning?.message ?? warning).startsWith(ALIAS_WARNING)) return
    return emit.call(process, warning, ...rest)
  }
  try {
    return fn()
  } finally {
    process.emitWarning = emit
  }
}
