// The test kit's narrow hooks into a Peer's or a Client's insides: the one test module that
// reaches insideOf() (the package does not export it). A test that needs more than what the
// public API shows takes one of these, each of one purpose, so what the tests lean on is
// listed here, and a change inside the core breaks one hook instead of many tests. What a
// user's own tests would want goes to zeromesh/testing instead (docs/guides/testing.md).
import { insideOf as peerInsides } from '../../peer/peer.js'
import { insideOf as clientInsides } from '../../client/client.js'

/** Stops `peer` without waiting for its work in flight (its drain timeout 0), for cleanups. */
export function stopAtOnce (peer) {
  peerInsides(peer).options.drainTimeout = 0
  return peer.stop()
}

/** `peer` answers DRAINING from now on, as a stopping peer does, and stays up. */
export function answerDraining (peer) {
  peerInsides(peer).admission.draining = true
}

/**
 * Puts `wrap(send)` in place of what `client` hands its transport: `send(endpoint, frames,
 * done)`, the frames as they go to the socket, for a test that watches or holds them back.
 */
export function wrapSends (client, wrap) {
  const transport = clientInsides(client).mesh.transport
  transport.send = wrap(transport.send.bind(transport))
}

/** The endpoint of the peer serving `client`'s one open stream (null when none is open). */
export function servingPeer (client) {
  const stream = clientInsides(client).streams.open.values().next().value
  return stream?.call.peer.endpoint ?? null
}

/** How many peers `client` holds connections to (its peer table). */
export function connectionsOf (client) {
  return clientInsides(client).mesh.table.entries.size
}
