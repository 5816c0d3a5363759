// A zeromesh peer: binds its socket, answers zeromesh requests through the dispatcher,
// answers 10/FLP pings and requests, and stops gracefully.
import { EventEmitter } from 'node:events'
import { PeerTransport } from './transport.js'
import { Dispatcher } from './dispatch.js'
import { resolvePeerOptions } from './options.js'
import { decode, encodeReply, encodePong, encodeError } from '../protocol/codec.js'
import { classify, Kind } from '../protocol/flp.js'
import { MessageType, Status, FLP_PONG } from '../protocol/constants.js'
import { ClosedError, ProtocolError } from '../protocol/errors.js'

const PONG = Buffer.from(FLP_PONG)
const NO_META = Object.freeze({})

export class Peer extends EventEmitter {
  /** @param {import('../index.js').PeerOptions} [options] */
  constructor (options) {
    super()
    this.options = resolvePeerOptions(options)
    this.state = 'new' // new -> starting -> running -> stopping -> stopped
    this.transport = null
    this.dispatcher = null
    this.counts = { received: 0, malformed: 0, flpPings: 0, flpRequests: 0, protocolErrors: 0, dropped: 0 }
    this.stopping = null
    this.starting = null
  }

  /** The endpoint clients and other peers use to reach this peer (set once started). */
  get endpoint () {
    return this.transport?.endpoint ?? null
  }

  /** Binds the socket. Resolves with the endpoint once requests can be served. */
  start () {
    if (this.state !== 'new') return Promise.reject(new ClosedError(`zeromesh: Peer.start() called when the peer is ${this.state}`))
    this.state = 'starting'
    this.starting = this.startNow()
    return this.starting
  }

  async startNow () {
    const o = this.options
    this.transport = new PeerTransport({
      bind: o.bind,
      advertise: o.advertise,
      linger: o.stopLinger,
      maxMessageSize: o.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval,
      heartbeatTimeout: o.heartbeatTimeout,
      onMessage: (id, frames) => this.onMessage(id, frames),
      onDrop: () => { this.counts.dropped++ },
    })
    try {
      await this.transport.bind()
    } catch (err) {
      this.state = 'stopped'
      throw err
    }
    this.dispatcher = new Dispatcher({
      handlers: o.handlers, maxInflight: o.maxInflight, clock: o.clock, endpoint: this.transport.endpoint,
    })
    this.state = 'running'
    return this.transport.endpoint
  }

  onMessage (clientId, frames) {
    this.counts.received++
    switch (classify(frames)) {
      case Kind.ZEROMESH: return this.onZeromesh(clientId, frames[0])
      case Kind.FLP_PING:
        this.counts.flpPings++
        return this.transport.send(clientId, [PONG])
      case Kind.FLP_REQUEST: return this.onFlpRequest(clientId, frames)
      default:
        this.counts.malformed++
    }
  }

  onZeromesh (clientId, frame) {
    let msg
    try {
      msg = decode(frame, this.options)
    } catch (err) {
      this.counts.malformed++
      if (err instanceof ProtocolError && err.protocolCode !== undefined) {
        this.counts.protocolErrors++
        this.transport.send(clientId, [encodeError(err.protocolCode, err.message)])
      }
      return
    }
    switch (msg.type) {
      case MessageType.REQUEST: {
        const reply = (entry) => this.sendReply(clientId, entry)
        for (const bad of msg.invalid) this.dispatcher.invalid(bad, reply)
        for (const req of msg.requests) this.dispatcher.run(req, reply)
        return
      }
      case MessageType.PING:
        return this.transport.send(clientId, [encodePong(msg.seq, NO_META)])
      default:
        // REPLY, PONG and ERROR are not sent to a peer by clients: counted and dropped.
        this.counts.malformed++
    }
  }

  sendReply (clientId, entry) {
    let frame
    try {
      frame = encodeReply(NO_META, [entry])
    } catch (err) {
      frame = encodeReply(NO_META, [[entry[0], Status.REMOTE, [`result could not be encoded: ${err?.message ?? err}`, 'ERR_ZEROMESH_ENCODE']]])
    }
    if (frame.length > this.options.maxMessageSize) {
      frame = encodeReply(NO_META, [[entry[0], Status.REMOTE,
        [`reply of ${frame.length} bytes is larger than maxMessageSize ${this.options.maxMessageSize}`, 'ERR_ZEROMESH_TOO_LARGE']]])
    }
    this.transport.send(clientId, [frame])
  }

  onFlpRequest (clientId, frames) {
    this.counts.flpRequests++
    const control = frames[0]
    const body = frames.slice(1)
    let out
    try {
      out = this.options.flpHandler(body)
    } catch {
      return // a throwing FLP handler gets no reply: FLP has no error frame
    }
    Promise.resolve(out).then((reply) => {
      const list = Array.isArray(reply) ? reply : [reply]
      this.transport?.send(clientId, [control, ...list.map(toFrame)])
    }, () => {})
  }

  /** Counters of what this peer received, answered and dropped. */
  stats () {
    return { ...this.counts, ...(this.dispatcher?.counts ?? {}), inflight: this.dispatcher?.inflight ?? 0 }
  }

  /**
   * Graceful stop: new requests are answered DRAINING (the client goes elsewhere at once),
   * in-flight requests finish (up to drainTimeout), their replies leave, the socket closes.
   */
  stop () {
    if (this.stopping !== null) return this.stopping
    if (this.state === 'new') { this.state = 'stopped'; this.stopping = Promise.resolve(); return this.stopping }
    this.stopping = this.stopNow()
    return this.stopping
  }

  async stopNow () {
    await this.starting?.catch(() => {})
    this.state = 'stopping'
    const { clock, drainTimeout } = this.options
    if (this.dispatcher !== null) {
      let timer
      const timedOut = new Promise((resolve) => { timer = clock.setTimeout(resolve, drainTimeout) })
      await Promise.race([this.dispatcher.drain(), timedOut])
      clock.clearTimeout(timer)
    }
    await this.transport?.close()
    this.state = 'stopped'
  }
}

function toFrame (x) {
  if (Buffer.isBuffer(x)) return x
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength)
  return Buffer.from(String(x))
}
