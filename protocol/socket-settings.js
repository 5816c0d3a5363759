// The ZeroMQ settings of PROTOCOL.md section 1, shared by every connecting socket (the
// client's, and a peer's outgoing membership socket). No socket is created here: the
// transports that import zeromq use these.
import process from 'node:process'

/**
 * Options of a connecting ROUTER that addresses peers by endpoint alias.
 * `immediate: false` keeps each peer's pipe across reconnects: with `true`, libzmq drops the
 * pipe the moment a connection breaks, discarding replies that arrived but were not read, so
 * a peer that answers and then closes (a graceful stop) would lose replies. Messages to a
 * disconnected peer are queued instead of refused; callers only send to peers they know are up.
 */
export function connectingRouterOptions ({ maxMessageSize, heartbeatInterval, heartbeatTimeout, sendHighWaterMark = 10000 }) {
  return {
    linger: 0, //               never hang the process at exit (the default -1 does)
    mandatory: true, //         a send to an unknown peer fails (EHOSTUNREACH) instead of vanishing
    immediate: false, //        keep each peer's pipe across reconnects (see above)
    sendTimeout: 0, //          sends never block: a full pipe is EAGAIN at once
    maxMessageSize, //          larger frames drop the connection (ZMQ_MAXMSGSIZE)
    heartbeatInterval, //       ZMTP ping per connection, so a frozen peer is noticed...
    heartbeatTimeout, //        ...and disconnected after this much silence
    heartbeatTimeToLive: heartbeatTimeout,
    handshakeInterval: 5000, // a peer that accepts TCP but never handshakes is dropped
    reconnectInterval: 100,
    reconnectMaxInterval: 2000,
    sendHighWaterMark,
    receiveHighWaterMark: 10000,
  }
}

// zeromq.js sets ZMQ_CONNECT_ROUTING_ID (which applies to the next connect, as intended) and
// then warns that an option set after an earlier connect "will not take effect". The warning
// is wrong for this option; this silences that one message during the call and no other.
const ALIAS_WARNING = 'Socket option will not take effect until next connect/bind'

/** Connects `socket` to `endpoint` with the endpoint itself as the connection's routing id. */
export function connectByAlias (socket, endpoint) {
  const emit = process.emitWarning
  process.emitWarning = function (warning, ...rest) {
    if (String(warning?.message ?? warning).startsWith(ALIAS_WARNING)) return
    return emit.call(process, warning, ...rest)
  }
  try {
    socket.connect(endpoint, { routingId: endpoint })
  } finally {
    process.emitWarning = emit
  }
}
