// Sealed membership requests (PROTOCOL.md 4.7). In a secured cluster the peers' bound
// sockets also take clients, which hold keys of their own, not the cluster's; ZeroMQ tells a
// socket nothing of which key a message came with. So a peer's membership requests travel
// sealed: wrapped with an HMAC-SHA256 tag made with a key derived from the cluster's secret
// key, which only peers hold. A receiver that holds the key takes a membership request only
// when its tag checks out. Answers need no seal: they come back on the requester's own
// connection, whose CURVE handshake proved the other end holds the cluster's secret key.
import crypto from 'node:crypto'
import { encodeSealed } from './codec.js'

const INFO = 'zeromesh gossip seal v1'

/** The sealing key of a cluster, from the 32 bytes of its CURVE secret key. */
export function sealKey (clusterSecret) {
  return Buffer.from(crypto.hkdfSync('sha256', clusterSecret, Buffer.alloc(0), INFO, 32))
}

function tagOf (key, frame) {
  return crypto.createHmac('sha256', key).update(frame).digest()
}

/** A membership request frame, sealed: a SEALED frame holding it and its tag. */
export function seal (key, frame) {
  return encodeSealed(tagOf(key, frame), frame)
}

/** The frame inside a decoded SEALED message when its tag checks out with `key`, else null. */
export function unseal (key, msg) {
  const tag = tagOf(key, msg.inner)
  return crypto.timingSafeEqual(tag, msg.tag) ? msg.inner : null
}
