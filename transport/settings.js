// The ZeroMQ settings of PROTOCOL.md section 1, shared by every connecting socket (the
// client's, and a peer's outgoing membership socket). No socket is created here: the
// transports that import zeromq use these.
import process from 'node:process'

// A broken connection is dialled again after RECONNECT_MS, doubling up to RECONNECT_MAX_MS
// while nothing listens there. 250 ms, not libzmq's usual seconds: a peer restarted in place
// (a supervisor, pm2, systemd) is back within a quarter second of binding, where a 2 s cap had
// a client find it up to 1.6 s later (issue 68's crash loop: both of its peers down 39-53% of
// the time, much of it waiting for this timer). A refused dial is a SYN and a RST; a peer gone
// for good is let go once the member lists say so.
export const RECONNECT_MS = 100
export const RECONNECT_MAX_MS = 250

// A handshake not finished within this is dropped, by either end (ZMQ_HANDSHAKE_IVL). 10 s,
// not 2: on a starved host (the lab's 120 peers and 24 clients on 2 cores) a CURVE handshake,
// whose ZAP answer waits for a busy JS thread, took over 2 s; the listener dropped it, both
// ends retried within 250 ms, and each retry cost another handshake's crypto: 17,576-31,766
// failed handshakes in one cold start, converged in 78-94 s. At 10 s: 41-742, and 25-37 s. What it
// costs: a TCP connection that never handshakes holds a descriptor up to 10 s (the security
// guide's threat model says how to cap those).
export const HANDSHAKE_TIMEOUT_MS = 10000

/**
 * Options of a connecting ROUTER that addresses peers by endpoint alias.
 * `immediate: false` keeps each peer's pipe across reconnects: with `true`, libzmq drops the
 * pipe the moment a connection breaks, discarding replies that arrived but were not read, so
 * a peer that answers and then closes (a graceful stop) would lose replies. Messages to a
 * disconnected peer are queued instead of refused; callers only send to peers they know are up.
 */
export function connectingRouterOptions ({ maxMessageSize, sendHighWaterMark = 10000, receiveHighWaterMark = 10000 }) {
  return {
    linger: 0, //               never hang the process at exit (the default -1 does)
    mandatory: true, //         a send to an unknown peer fails (EHOSTUNREACH) instead of vanishing
    immediate: false, //        keep each peer's pipe across reconnects (see above)
    sendTimeout: 0, //          sends never block: a full pipe is EAGAIN at once
    maxMessageSize, //          larger frames drop the connection (ZMQ_MAXMSGSIZE)
    // No ZMTP heartbeats (ZMQ_HEARTBEAT_IVL stays 0): the connector's own, in protocol PINGs
    // (heartbeats.js), notice a frozen peer. A ZMTP PING is what libzmq 4.3.5 aborts the
    // receiving process over when its connection broke with its inbound queue full.
    handshakeInterval: HANDSHAKE_TIMEOUT_MS, // a peer that accepts TCP but never handshakes is dropped
    reconnectInterval: RECONNECT_MS,
    reconnectMaxInterval: RECONNECT_MAX_MS,
    sendHighWaterMark,
    receiveHighWaterMark,
  }
}

/**
 * ZeroMQ bounds a connection's queues in messages, not bytes (ZMQ_SNDHWM, ZMQ_RCVHWM). This
 * is the message count that keeps one connection's queue, in each direction, within
 * `bytes` when every frame is as large as allowed: 32 MiB by default, so a client that sends
 * faster than it reads, or never reads, costs a peer a bounded amount of memory. Coalescing
 * keeps frames per connection few, so the count is rarely the limit for honest traffic.
 */
export function queueLimit (maxMessageSize, bytes = 32 * 1024 * 1024) {
  return Math.max(16, Math.min(1000, Math.floor(bytes / maxMessageSize)))
}

// zeromq.js sets ZMQ_CONNECT_ROUTING_ID (which applies to the next connect, as intended) and
// then warns that an option set after an earlier connect "will not take effect". The warning
// is wrong for this option; this silences that one message during the call and no other.
const ALIAS_WARNING = 'Socket option will not take effect until next connect/bind'

/**
 * The connect aliases of one connecting ROUTER: each connection to an endpoint gets the
 * routing id "endpoint#n", with n new for every connect. libzmq aborts the whole process
 * (assertion `!has_out_pipe (routing_id)`, router.cpp) when a connect reuses the routing id
 * of a pipe that still exists, which is what reconnecting to an endpoint after disconnect()
 * would do with the bare endpoint as alias: the old pipe outlives disconnect() for a while.
 * Aliases are kept as the bytes sent (zeromq.js converts a string each send) and found again
 * by their n, read from the received routing id without making a string of it: at 1 in
 * flight the two conversions were about 0.8 us of the client's 25 us of CPU a request
 * (bench/results/earlier.md, "1 in flight, rung by rung").
 */
export class Aliases {
  constructor () {
    this.byEndpoint = new Map() // endpoint -> routing id (bytes) of its current connection
    this.byAlias = new Map() //    n of a routing id -> { endpoint, length }, for this and earlier connections
    this.next = 0
  }

  /**
   * Connects `socket` to `endpoint` under a fresh alias, unless already connected. Never
   * throws: endpoints are checked by protocol/endpoint.js before they get here, and should
   * ZeroMQ refuse one all the same, the refusal is returned ('refused') for the caller to
   * count, never thrown into the caller's event handler. Returns 'connected', 'already' or
   * 'refused'.
   */
  connect (socket, endpoint) {
    if (this.byEndpoint.has(endpoint)) return 'already'
    const n = ++this.next
    const alias = `${endpoint}#${n}`
    const emit = process.emitWarning
    process.emitWarning = function (warning, ...rest) {
      if (String(warning?.message ?? warning).startsWith(ALIAS_WARNING)) return
      return emit.call(process, warning, ...rest)
    }
    try {
      socket.connect(endpoint, { routingId: alias })
    } catch {
      return 'refused'
    } finally {
      process.emitWarning = emit
    }
    const id = Buffer.from(alias)
    this.byEndpoint.set(endpoint, id)
    this.byAlias.set(n, { endpoint, length: id.length })
    return 'connected'
  }

  /** Disconnects from `endpoint`; its alias is never used again. */
  disconnect (socket, endpoint) {
    const id = this.byEndpoint.get(endpoint)
    if (id === undefined) return false
    this.byEndpoint.delete(endpoint)
    // Replies still in the old pipe can be read for a while; then the alias is forgotten.
    const n = aliasNumber(id)
    setTimeout(() => this.byAlias.delete(n), 60000).unref()
    if (!socket.closed) {
      try { socket.disconnect(endpoint) } catch { /* already gone */ }
    }
    return true
  }

  has (endpoint) {
    return this.byEndpoint.has(endpoint)
  }

  /** The routing id (bytes, never to be changed) to send to `endpoint` with, or undefined when not connected. */
  aliasOf (endpoint) {
    return this.byEndpoint.get(endpoint)
  }

  /**
   * The endpoint a received routing-id frame stands for, or undefined. Only n and the length
   * are compared: libzmq names a connected pipe by the ZMQ_CONNECT_ROUTING_ID it was made with
   * (connect() above), never by what the peer announces, so every id received is one of ours.
   */
  endpointOf (frame) {
    const a = this.byAlias.get(aliasNumber(frame))
    return a !== undefined && a.length === frame.length ? a.endpoint : undefined
  }
}

const HASH = 0x23 // '#'
const DIGIT_0 = 0x30
const MAX_DIGITS = 15 // n stays an exact integer

/** The n of a routing id "endpoint#n", or -1 when it does not end in "#" and digits. */
export function aliasNumber (id) {
  let n = 0
  let scale = 1
  for (let i = id.length - 1, digits = 0; i >= 0; i--, digits++) {
    const c = id[i]
    if (c === HASH) return digits === 0 ? -1 : n
    if (c < DIGIT_0 || c > DIGIT_0 + 9 || digits === MAX_DIGITS) return -1
    n += (c - DIGIT_0) * scale
    scale *= 10
  }
  return -1
}
