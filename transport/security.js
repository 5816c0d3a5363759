// The `security` options of Peer and Client, checked and resolved, and the CURVE socket
// options they stand for (docs/guides/security.md).
//
// A cluster shares one keypair: every peer's bound socket is a CURVE server with it, and a
// peer's own connecting socket presents it as its client key, which is how peers know each
// other. Clients hold a keypair of their own and the cluster's public key; a peer's ZAP
// handler (zap.js) lets in the cluster key and the keys on its allow-list, nothing else.
import { capDefaults } from './connection-caps.js'
import * as zmq from 'zeromq'
import { invalidArgument } from '../protocol/errors.js'
import { isLoopback } from '../protocol/endpoint.js'
import { keyText, publicKeyOf, readPublicKeys, z85Decode } from './keys.js'

/** Whether this build of libzmq can do CURVE; throws a clear error when it cannot. */
export function requireCurve () {
  if (!zmq.capability.curve) {
    throw invalidArgument('security needs CURVE, and the libzmq this zeromq build ships has none (zmq.capability.curve is false): install a zeromq build with libsodium or CURVE support')
  }
}

/**
 * A Peer's `security` option: undefined (plain, loopback and ipc only), false (plain
 * anywhere, on purpose), or { clusterKey, allow }. `clusterKey` is the cluster's secret key
 * (Z85); `allow` the clients' public keys: keys, `.pub` files or directories of them, as an
 * array or one comma-separated string. Resolves to null, false, or
 * { cluster: { publicKey, secretKey }, allowItems, allowed: Set, caps }. `maxConnections`,
 * `maxConnectionsPerAddress` and `handshakesPerSecond` cap clients' handshakes
 * (connection-caps.js).
 */
export function resolvePeerSecurity (v) {
  if (v === undefined || v === null) return null
  if (v === false) return false
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw invalidArgument('security must be false (plain on purpose) or { clusterKey, allow }, as docs/guides/security.md shows')
  }
  const known = ['clusterKey', 'allow', ...Object.keys(capDefaults)]
  for (const k of Object.keys(v)) {
    if (!known.includes(k)) throw invalidArgument(`unknown security key "${k}"; known keys: ${known.join(', ')}`)
  }
  if (v.clusterKey === undefined) throw invalidArgument('security.clusterKey is required: the cluster\'s secret key (Z85), as "zeromesh keygen" writes to PREFIX.key')
  const secretKey = keyText(v.clusterKey, 'secret', 'security.clusterKey')
  const allowItems = allowList(v.allow)
  const caps = {}
  for (const k of Object.keys(capDefaults)) {
    const n = v[k] ?? capDefaults[k]
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1) throw invalidArgument(`security.${k} must be a whole number from 1, got ${JSON.stringify(v[k])}`)
    caps[k] = n
  }
  return { cluster: { publicKey: publicKeyOf(secretKey), secretKey }, allowItems, allowed: readPublicKeys(allowItems), caps }
}

function allowList (v) {
  if (v === undefined) return []
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter(Boolean)
  if (Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0)) return [...v]
  throw invalidArgument('security.allow must be an array (or a comma-separated string) of client public keys, .pub files or directories of .pub files')
}

/**
 * A Client's `security` option: undefined (plain, loopback and ipc seeds only), false (plain
 * anywhere), or { clusterPublicKey, secretKey, publicKey? }. Resolves to null, false or
 * { serverKey, publicKey, secretKey }.
 */
export function resolveClientSecurity (v) {
  if (v === undefined || v === null) return null
  if (v === false) return false
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw invalidArgument('security must be false (plain on purpose) or { clusterPublicKey, secretKey }, as docs/guides/security.md shows')
  }
  for (const k of Object.keys(v)) {
    if (k !== 'clusterPublicKey' && k !== 'secretKey' && k !== 'publicKey') throw invalidArgument(`unknown security key "${k}"; known keys: clusterPublicKey, secretKey, publicKey`)
  }
  if (v.clusterPublicKey === undefined || v.secretKey === undefined) {
    throw invalidArgument('security needs clusterPublicKey (the cluster\'s PREFIX.pub) and secretKey (this client\'s own PREFIX.key, listed on the peers\' allow-list)')
  }
  const serverKey = keyText(v.clusterPublicKey, 'public', 'security.clusterPublicKey')
  const secretKey = keyText(v.secretKey, 'secret', 'security.secretKey')
  const publicKey = publicKeyOf(secretKey)
  if (v.publicKey !== undefined && keyText(v.publicKey, 'public', 'security.publicKey') !== publicKey) {
    throw invalidArgument('security.publicKey is not the public key of security.secretKey (leave it out: it is derived from the secret key)')
  }
  return { serverKey, publicKey, secretKey }
}

/**
 * Refuses a plain socket off loopback: without `security` (undefined), every endpoint in
 * `endpoints` must be loopback, ipc or inproc. `what` names them in the message.
 */
export function requireLoopbackWhenPlain (security, endpoints, what, fix) {
  if (security !== null) return
  const outside = endpoints.filter((ep) => !isLoopback(ep))
  if (outside.length === 0) return
  throw invalidArgument(`${what} ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not loopback, and traffic there would be plain: readable and forgeable by anyone on the path. ${fix}`)
}

/** CURVE options of a secured peer's bound socket, answering to ZAP `zapDomain`. */
export function serverCurveOptions (security, zapDomain) {
  return {
    curveServer: true,
    curveSecretKey: security.cluster.secretKey,
    curvePublicKey: security.cluster.publicKey,
    zapDomain,
    zapEnforceDomain: true, // no handler to ask: the handshake fails, never passes
  }
}

/** CURVE options of a connecting socket: `credentials` is { serverKey, publicKey, secretKey }. */
export function clientCurveOptions (credentials) {
  return { curveServerKey: credentials.serverKey, curvePublicKey: credentials.publicKey, curveSecretKey: credentials.secretKey }
}

/** A secured peer's credentials when it connects to other peers: the cluster key both ways. */
export function peerCredentials (security) {
  return { serverKey: security.cluster.publicKey, publicKey: security.cluster.publicKey, secretKey: security.cluster.secretKey }
}

/** The 32 raw bytes of the cluster secret key, from which the gossip key is derived. */
export function clusterSecretBytes (security) {
  return z85Decode(security.cluster.secretKey)
}
