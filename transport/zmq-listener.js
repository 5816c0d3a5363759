// A peer's bound ZeroMQ ROUTER socket: binds with its routing id set to the advertised
// endpoint (10/FLP: a server's identity is its endpoint), receives, and sends replies without
// ever blocking, by the back-pressure policy below.
import * as zmq from 'zeromq'
import { bindSpec, defaultAdvertiseHost, normalizeRemote, portOf } from '../protocol/endpoint.js'
import { invalidArgument } from '../protocol/errors.js'
import { systemClock } from '../runtime/clock.js'
import { queueLimit, HANDSHAKE_TIMEOUT_MS } from './settings.js'
import { serverCurveOptions, requireCurve } from './security.js'
import * as zap from './zap.js'
import { RefusalAddresses } from './refusal-addresses.js'
import { ConnectionCaps } from './connection-caps.js'

const REBIND_ATTEMPTS = 20 // an ephemeral port can be taken between probe and rebind
const EAGAIN_RETRY_MS = 2 //  pause before re-sending a reply that met a full pipe
const EAGAIN_GIVE_UP_MS = 2000 // after this a reply to a client that never drains is dropped
const RETRY_BYTES_PER_CONNECTION = 4 * 1024 * 1024 // replies held for one full pipe, at most...
const RETRY_BYTES = 32 * 1024 * 1024 //              ...and for all of them together

export class ZmqListener {
  /**
   * @param {object} o
   * @param {string} o.bind
   * @param {string|undefined} o.advertise
   * @param {number} o.linger
   * @param {number} o.maxMessageSize
   * @param {number} o.heartbeatInterval
   * @param {number} o.heartbeatTimeout
   * @param {(clientId: Buffer, frames: Buffer[]) => void} o.onMessage
   * @param {(event: string) => void} o.onDrop  a reply was dropped (client gone or stuck)
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} [o.clock]
   * @param {object|null|false} [o.security]  resolved peer security (security.js): CURVE and ZAP when set
   * @param {(refusal: { reason: string, key: string|null, address: string|null }) => void} [o.onRefused]
   *   a handshake this socket refused: a key not allowed (with the key and the client's
   *   address), or a client that does not speak CURVE with the cluster's key
   */
  constructor (o) {
    this.o = o
    this.security = o.security || null
    this.allowed = this.security?.allowed ?? new Set()
    this.zapDomain = null
    this.clock = o.clock ?? systemClock
    this.endpoint = null
    this.socket = null
    this.loop = null
    this.retry = [] // [deadline, msg][] replies waiting for room in a full pipe
    this.retryTimer = null
    this.retryBytes = 0
    this.retryBytesOf = new Map() // connection (routing id, latin1) -> bytes it holds in `retry`
    this.refusalAddresses = null // who a refusal before ZAP came from (refusal-addresses.js)
  }

  async bind () {
    const { bindTo, wildcardHost } = bindSpec(this.o.bind)
    if (this.security !== null) {
      requireCurve()
      // The ZAP handler answers before the first handshake can come.
      // Past the key, the caps (connection-caps.js): holders of the cluster key are peers and
      // are not capped.
      this.caps = new ConnectionCaps({ ...this.security.caps, port: () => this.socket === null ? null : tcpPort(this.socket), clock: this.clock })
      this.zapDomain = await zap.register({
        allows: (key, address) => {
          if (key === this.security.cluster.publicKey) return true
          if (!this.allowed.has(key)) return false
          return this.caps.admit(address) ?? true
        },
        decided: (allowed, key, address, reason) => { if (!allowed) this.refused(reason, key, address) },
      })
    }
    try {
      return await this.bindTo(bindTo, wildcardHost)
    } catch (err) {
      this.releaseZap()
      throw err
    }
  }

  /**
   * Closes every connection this socket accepted, and takes new ones at once on the same
   * endpoint: libzmq offers no way to close one connection alone, so the socket is closed
   * and a new one, with the same routing id and settings, binds the same endpoint. (Not
   * zmq_unbind: libzmq 4.3.5 asserted in pipe.cpp when a listener was unbound with live
   * connections, and the process aborted.) Replies held for the old connections are dropped;
   * clients reconnect within their reconnect interval (100 ms) and go through ZAP again.
   */
  async rebind () {
    const old = this.socket
    if (old === null) return
    const bound = old.lastEndpoint
    for (let i = 0; i < this.retry.length; i++) this.o.onDrop('closed')
    this.retry = []
    this.retryBytes = 0
    this.retryBytesOf.clear()
    const s = this.createSocket(this.endpoint)
    this.socket = s // the old loop ends: it runs while this.socket is its socket
    old.close()
    await this.loop?.catch(() => {})
    // The old socket's port is let go by ZeroMQ's I/O thread a moment after close.
    for (let pause = 5, waited = 0; ; waited += pause, pause = Math.min(pause * 2, 100)) {
      try {
        await s.bind(bound)
        break
      } catch (err) {
        if (err.code !== 'EADDRINUSE' || waited > 3000) { this.socket = null; s.close(); throw err }
        await new Promise((resolve) => this.clock.setTimeout(resolve, pause))
      }
    }
    this.loop = this.receiveLoop()
  }

  /** The clients' keys the ZAP handler lets in from now on (the cluster's key always). */
  setAllowed (keys) {
    this.allowed = keys
  }

  refused (reason, key = null, address = null) {
    this.o.onRefused?.({ reason, key, address })
  }

  releaseZap () {
    if (this.zapDomain !== null) zap.release(this.zapDomain)
    this.zapDomain = null
  }

  async bindTo (bindTo, wildcardHost) {
    let lastErr
    for (let i = 0; i < REBIND_ATTEMPTS; i++) {
      let target = bindTo
      let s = null
      try {
        // The routing id has to be set before bind, and with port 0 the port is only known
        // after a bind: a probe socket learns a free port, then the real one binds it.
        if (bindTo.endsWith(':*')) target = await probePort(bindTo)
        const endpoint = this.advertised(target, wildcardHost)
        s = this.createSocket(endpoint)
        await bindSoon(s, target, bindTo.endsWith(':*'), this.clock)
        this.socket = s
        this.endpoint = endpoint
        this.loop = this.receiveLoop()
        if (this.security !== null) {
          this.refusalAddresses = new RefusalAddresses(() => tcpPort(s), this.clock)
          await this.refusalAddresses.start()
        }
        return endpoint
      } catch (err) {
        s?.close()
        lastErr = err
        if (err.code !== 'EADDRINUSE' || !bindTo.endsWith(':*')) break
      }
    }
    throw invalidArgument(`cannot bind ${this.o.bind}: ${lastErr?.message ?? lastErr}`)
  }

  advertised (bound, wildcardHost) {
    if (this.o.advertise !== undefined) return this.o.advertise
    if (!wildcardHost) return normalizeRemote(bound, 'bound endpoint')
    return `tcp://${defaultAdvertiseHost()}:${portOf(bound)}`
  }

  createSocket (routingId) {
    const s = new zmq.Router({
      routingId, //            10/FLP: a server's identity is its endpoint
      // How long replies already handed to ZeroMQ may take to leave once the socket closes.
      // Bounded, so a process never hangs at exit (zmq-facts 2: the default -1 does).
      linger: this.o.linger,
      mandatory: true, //      unroutable replies fail instead of vanishing
      sendTimeout: 0, //       replies never block: EHOSTUNREACH/EAGAIN come back at once
      maxMessageSize: this.o.maxMessageSize,
      // 0 by default (peer/options.js): with pings on, libzmq 4.3.5 aborts the process when a
      // connection whose inbound queue is full hangs up (stream_engine_base.cpp:310), which
      // any client can do on purpose. What a frozen client's connection holds is bounded by
      // the queue limits below.
      heartbeatInterval: this.o.heartbeatInterval,
      heartbeatTimeout: this.o.heartbeatTimeout,
      heartbeatTimeToLive: this.o.heartbeatTimeout,
      handshakeInterval: HANDSHAKE_TIMEOUT_MS, // a connection that never completes its handshake is dropped
      // Each connection's queues hold a bounded number of bytes (socket-settings.js): a client
      // that sends faster than this peer reads is slowed by TCP, one that never reads gets
      // its replies dropped and counted.
      sendHighWaterMark: queueLimit(this.o.maxMessageSize),
      receiveHighWaterMark: queueLimit(this.o.maxMessageSize),
      ...(this.security === null ? {} : serverCurveOptions(this.security, this.zapDomain)),
    })
    if (this.security !== null) {
      // Refusals before ZAP is asked: a client with the wrong cluster key, or none. The
      // event names no client address (a bound socket's events carry its own endpoint): the
      // kernel's table of connections this side closed does (refusal-addresses.js).
      s.events.on('handshake:error:protocol', (e) => {
        const reason = handshakeReason(e.error?.code)
        if (this.refusalAddresses === null) this.refused(reason)
        else this.refusalAddresses.note((address) => this.refused(reason, null, address))
      })
    }
    return s
  }

  // receive() awaited directly: zeromq.js's async iterator adds a promise, two microtask
  // hops and a native `closed` read to every message.
  async receiveLoop () {
    const s = this.socket
    try {
      while (this.socket === s) { // close() sets it null before closing
        const msg = await s.receive()
        const clientId = msg[0]
        try {
          this.o.onMessage(clientId, msg.length > 1 ? msg.slice(1) : [])
        } catch {
          // onMessage handles its own errors; this is the last line that keeps the loop alive.
          this.o.onDrop('handler-error')
        }
      }
    } catch (err) {
      if (!s.closed) throw err
    }
  }

  /** Whether replies can still be sent (bound, not closed). */
  get open () {
    return this.socket !== null
  }

  /**
   * Sends a reply. Never throws and never blocks; a reply to a client that left is dropped.
   * With `done`, nothing is retried or counted here: `done(code)` is called once,
   * asynchronously, with null when ZeroMQ took the message or the error's code ('EAGAIN' for
   * a full pipe), for a sender that keeps its own order (ordered-sender.js).
   */
  send (clientId, frames, done) {
    const s = this.socket
    if (s === null) { // close() sets it null first
      if (done === undefined) this.o.onDrop('closed')
      else queueMicrotask(() => done('CLOSED'))
      return
    }
    const msg = frames.length === 1 ? [clientId, frames[0]] : [clientId, ...frames]
    // zeromq.js throws at once, not in the promise, while the socket binds (EBUSY: rebind()
    // gives the new socket replies for connections that are gone): dropped like any other.
    try {
      if (done === undefined) s.send(msg).catch((err) => this.sendFailed(err, msg, this.clock.now() + EAGAIN_GIVE_UP_MS))
      else s.send(msg).then(() => done(null), (err) => done(err?.code ?? 'ERROR'))
    } catch (err) {
      if (done === undefined) this.sendFailed(err, msg, 0)
      else queueMicrotask(() => done(err?.code ?? 'ERROR'))
    }
  }

  /**
   * A reply ZeroMQ did not take. A full pipe (EAGAIN) is tried again every EAGAIN_RETRY_MS for
   * up to EAGAIN_GIVE_UP_MS, within a byte budget per connection and in all: a client that
   * reads slowly gets its replies a little late, one that never reads gets them dropped.
   */
  sendFailed (err, msg, deadline) {
    if (err?.code === 'EAGAIN' && this.clock.now() < deadline && this.socket !== null && !this.socket.closed) {
      const key = msg[0].toString('latin1')
      let bytes = 0
      for (let i = 1; i < msg.length; i++) bytes += msg[i].length
      const held = this.retryBytesOf.get(key) ?? 0
      if (held + bytes <= RETRY_BYTES_PER_CONNECTION && this.retryBytes + bytes <= RETRY_BYTES) {
        this.retryBytesOf.set(key, held + bytes)
        this.retryBytes += bytes
        this.retry.push([deadline, msg])
        this.retryTimer ??= this.clock.setTimeout(() => this.flushRetries(), EAGAIN_RETRY_MS)
        return
      }
      this.o.onDrop('client-not-reading')
      return
    }
    this.o.onDrop(err?.code === 'EHOSTUNREACH' ? 'client-gone' : `send-${err?.code ?? 'error'}`)
  }

  flushRetries () {
    this.retryTimer = null
    const list = this.retry
    this.retry = []
    this.retryBytes = 0
    this.retryBytesOf.clear()
    for (const [deadline, msg] of list) {
      if (this.socket === null || this.socket.closed) { this.o.onDrop('closed'); continue }
      try {
        this.socket.send(msg).catch((err) => this.sendFailed(err, msg, deadline))
      } catch (err) {
        this.sendFailed(err, msg, 0) // binding (rebind()): dropped
      }
    }
  }

  /** Closes the socket; replies already handed to ZeroMQ have `linger` ms to leave. */
  async close () {
    const s = this.socket
    if (s === null) return
    this.socket = null
    if (this.retryTimer !== null) this.clock.clearTimeout(this.retryTimer)
    for (let i = 0; i < this.retry.length; i++) this.o.onDrop('closed')
    this.retry = []
    this.retryBytes = 0
    this.retryBytesOf.clear()
    this.refusalAddresses?.close()
    s.close()
    await this.loop?.catch(() => {})
    this.releaseZap()
  }
}

/** The TCP port `s` is bound to, null for ipc:// and inproc://. */
function tcpPort (s) {
  const m = /^tcp:\/\/.*:(\d+)$/.exec(s.lastEndpoint ?? '')
  return m === null ? null : Number(m[1])
}

/** What a handshake error on a secured socket means, by its ZMTP code. */
function handshakeReason (code) {
  if (code === 'ERR_ZMTP_MECHANISM_MISMATCH') return 'not CURVE'
  if (code === 'ERR_ZMTP_CRYPTOGRAPHIC') return 'wrong cluster key'
  return `handshake error ${code ?? 'unknown'}`
}

/**
 * Binds `target`. A port the probe socket just released can still be held for a moment by
 * ZeroMQ's I/O thread (the listener closes asynchronously), so EADDRINUSE on a probed port is
 * retried a few times, pausing 5, 10, 20, 40, 80 ms, before the caller tries another port.
 */
async function bindSoon (socket, target, probed, clock) {
  for (let pause = 5; ; pause *= 2) {
    try {
      return await socket.bind(target)
    } catch (err) {
      if (!probed || err.code !== 'EADDRINUSE' || pause > 80) throw err
      await new Promise((resolve) => clock.setTimeout(resolve, pause))
    }
  }
}

async function probePort (bindTo) {
  const probe = new zmq.Router({ linger: 0 })
  try {
    await probe.bind(bindTo)
    const ep = probe.lastEndpoint
    await probe.unbind(ep)
    return ep
  } finally {
    probe.close()
  }
}
