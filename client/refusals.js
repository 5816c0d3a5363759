// Handshakes the peers refused this client (transport/zmq-connector.js): what each refusal
// means, said plainly, and the one error waiting requests fail with once every peer known has
// refused (no retry can fix a key).
import { HandshakeError } from '../protocol/errors.js'

// A peer that closes a handshake only after this long has let it run out (its handshake timer,
// 2 s on a zeromesh peer: an overloaded peer whose ZAP answers come late), which says nothing
// about this client's keys. A wrong cluster key is found by the peer's libzmq at the first
// message of the handshake, and the connection closes within a round trip.
export const SLOW_HANDSHAKE_MS = 1000

/**
 * The refusal a failed handshake with `peer` amounts to, or null when it does not count yet.
 * A refusal by the peer's allow-list or a mismatch of mechanisms is certain at once; a peer
 * that hung up mid-handshake (how a wrong cluster key shows on this side) counts from the
 * second time in a row, and only for EPIPE or a reset that came quickly: a frozen peer times
 * out instead, a peer killed mid-handshake does it once, and an overloaded peer hangs up when
 * its handshake timer runs out (SLOW_HANDSHAKE_MS or more after the connection).
 * @param {import('./peer-table.js').PeerEntry} peer  its handshakeFailures is counted here
 * @param {{ kind: string, code: string|null, elapsedMs?: number|null }} failure
 * @param {{ publicKey: string }|null|false} security  this client's
 */
export function handshakeRefusal (peer, { kind, code, elapsedMs = null }, security) {
  if (kind === 'other' && elapsedMs !== null && elapsedMs >= SLOW_HANDSHAKE_MS) {
    peer.handshakeFailures = 0 // timed out: not a hang-up in a row
    return null
  }
  peer.handshakeFailures++
  if (kind === 'other' && (peer.handshakeFailures < 2 || (code !== 'EPIPE' && code !== 'ECONNRESET'))) return null
  const secured = Boolean(security)
  let why
  if (kind === 'auth') why = `refused this client's key ${security?.publicKey ?? '(none)'}: it is not on the peer's allow-list`
  else if (code === 'ERR_ZMTP_MECHANISM_MISMATCH') why = secured ? 'is not secured (plain), and this client runs CURVE' : 'runs CURVE: this client needs security: { clusterPublicKey, secretKey } (--cluster-pub, --key)'
  else if (kind === 'other') why = secured ? 'hung up during the CURVE handshake: the cluster public key is wrong, or the peer is not secured' : 'hung up during the handshake: it probably runs CURVE, and this client needs security: { clusterPublicKey, secretKey } (--cluster-pub, --key)'
  else why = `refused the handshake (${code})`
  return new HandshakeError(`zeromesh: ${peer.endpoint} ${why}`)
}

/** Whether every peer in `table` refused this client's handshake (and none is up). */
export function allRefused (table) {
  if (table.entries.size === 0) return false
  for (const peer of table.entries.values()) if (peer.refusal === null) return false
  return true
}

/** The refusal to fail a request with: the one peer's, or every peer's in one message. */
export function refusalError (table) {
  const refused = [...table.entries.values()].filter((p) => p.refusal !== null)
  if (refused.length === 1) return refused[0].refusal
  const shown = refused.slice(0, 3).map((p) => p.refusal.message.replace(/^zeromesh: /, ''))
  return new HandshakeError(`zeromesh: ${refused.length} peers refused this client at the handshake: ${shown.join('; ')}${refused.length > 3 ? '; ...' : ''}`)
}
