// Which client key a connection holds (PROTOCOL.md 4.9). ZeroMQ tells a peer the key of a
// connection only at its handshake, to ZAP, and nothing of it afterwards; so a peer cannot
// stop answering the connections of a key it no longer allows. A secured client proves its
// key on each new connection: the peer's PONG carries a challenge (`ch`, 16 random bytes) for
// that connection, and the client answers KEY_PROOF [its public key, mac], mac =
// HMAC-SHA256(X25519(client secret, cluster public), "zeromesh key proof v1" || ch). The
// peer computes the same secret as X25519(cluster secret, client public). Only the holder of
// the client's secret key can answer, and only on the connection the challenge went to
// (CURVE keeps it from anyone else).
import crypto from 'node:crypto'

const LABEL = Buffer.from('zeromesh key proof v1')

/** A KeyObject for a raw 32-byte X25519 secret key (with its public key). */
function privateKey (secret, publicKey) {
  return crypto.createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: Buffer.from(secret).toString('base64url'), x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' })
}

function publicKeyObject (raw) {
  return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' })
}

/**
 * The proof for challenge `ch`, from one side's secret key (with its public key) and the
 * other side's public key: the client computes it with its own keys and the cluster's public
 * key, the peer with the cluster's keys and the client's public key. Raw 32-byte keys.
 */
export function keyProof ({ secret, publicKey }, otherPublic, ch) {
  const shared = crypto.diffieHellman({ privateKey: privateKey(secret, publicKey), publicKey: publicKeyObject(otherPublic) })
  return crypto.createHmac('sha256', shared).update(LABEL).update(ch).digest()
}

/** Whether `mac` is the proof for `ch` (constant time); false for any malformed key. */
export function checkKeyProof (own, clientPublic, ch, mac) {
  let expected
  try { expected = keyProof(own, clientPublic, ch) } catch { return false }
  return mac.length === expected.length && crypto.timingSafeEqual(expected, mac)
}

/** A fresh challenge for one connection. */
export function newChallenge () {
  return crypto.randomBytes(16)
}
