// Which allowed key each client connection of a secured peer holds, as the clients prove it
// (protocol/key-proof.js, PROTOCOL.md 4.9), so that revoking a key cuts its open connections
// (docs/guides/security.md): once the allow-list no longer holds a key, the connections that
// proved it get no more answers, at once, and nobody else notices. So do the connections the
// peer has seen that proved no key still allowed: any of them may hold the revoked one. Members
// are not clients (their requests are sealed with the cluster key, and they prove nothing):
// a connection that sent a good seal is a member's, never cut, and one that proves an allowed
// key, or seals, after a cut is answered again (a client whose proof was on its way). A
// connection that asked for requests without proving a key (an older client, or one written
// from an older PROTOCOL.md) would stay cut for good, so when a key is revoked while such
// connections are about, the peer closes every connection (revoke()'s answer), the only way
// libzmq offers; they reconnect, and the handshake refuses the revoked key.
//
// What is known of each connection lives on it (connections.js: challenge, proven, cut,
// member, seen, askedAt); the table bounds how many are remembered.
import { newChallenge, checkKeyProof } from '../protocol/key-proof.js'

export class KeyProofs {
  /**
   * @param {object} o
   * @param {{ secret: Buffer, publicKey: Buffer }} o.cluster  raw 32-byte keys
   * @param {(raw: Buffer) => string} o.keyText  a raw public key as the allow-list writes it (Z85)
   * @param {() => Set<string>} o.allowed  the keys allowed now
   */
  constructor (o) {
    this.o = o
    this.clusterKey = o.keyText(o.cluster.publicKey) // a member's own client proves it (peer/publisher.js)
    this.lastAllowed = new Set(o.allowed())
    this.counts = { proofs: 0, badProofs: 0, cutConnections: 0, cutUnproven: 0, uncut: 0, cutFrames: 0, resets: 0 }
  }

  /** A message from `conn` (any but a seal or a proof): remembered until it proves a key, so a revocation can cut it. */
  seen (conn) {
    if (conn.proven === null && !conn.member) conn.seen = true
  }

  /** `conn` sent a good seal: a member's connection, answered whatever the allow-list says of client keys. */
  member (conn) {
    conn.member = true
    conn.seen = false
    if (conn.cut) { conn.cut = false; this.counts.uncut++ }
  }

  /** A challenge for `conn`, to go in its PONG. */
  challenge (conn) {
    return (conn.challenge = newChallenge())
  }

  /** A KEY_PROOF from `conn`: true if it proves an allowed key on this connection. */
  prove (conn, key, mac) {
    const ch = conn.challenge
    if (ch === null || !checkKeyProof(this.o.cluster, key, ch, mac)) { this.counts.badProofs++; return false }
    conn.challenge = null
    const text = this.o.keyText(key)
    if (text === this.clusterKey) { this.member(conn); this.counts.proofs++; return true } // a member's own client: never cut
    if (!this.o.allowed().has(text)) { this.counts.badProofs++; return false }
    conn.proven = text
    conn.askedAt = -Infinity
    conn.seen = false
    if (conn.cut) { conn.cut = false; this.counts.uncut++ } // cut while its proof was on its way: answered again
    this.counts.proofs++
    return true
  }

  /** A request from `conn`: remembered if it has proved nothing (see revoke). */
  asked (conn, now) {
    if (conn.proven === null) conn.askedAt = now
  }

  /**
   * The allow-list changed to `allowed`: when it dropped a key, the connections of `conns`
   * that proved a key no longer on it are cut, and so are those seen that proved nothing.
   * Returns { cut: the connections cut now, closeAll }: closeAll when every connection must
   * be closed as well, because a key was revoked while connections that never proved a key
   * asked for something in the last ten minutes (they would stay cut for good).
   */
  revoke (allowed, conns, now) {
    const removedKeys = [...this.lastAllowed].some((k) => !allowed.has(k))
    this.lastAllowed = new Set(allowed)
    const cut = []
    let closeAll = false
    for (const conn of conns) {
      if (conn.proven !== null) {
        if (allowed.has(conn.proven)) continue
        conn.proven = null
        conn.cut = true
        cut.push(conn)
        this.counts.cutConnections++
      } else if (removedKeys) {
        if (conn.seen) {
          conn.seen = false
          conn.cut = true
          cut.push(conn)
          this.counts.cutUnproven++
        }
        if (conn.askedUnproven(now)) closeAll = true
      }
    }
    return { cut, closeAll }
  }

  /** Every connection was closed (the listener bound again): the peer forgets them all (connections.js clear()). */
  reset () {
    this.counts.resets++
  }

  /** Counters, and how many connections of `conns` proved a key or are cut. */
  stats (conns) {
    let proven = 0
    let cut = 0
    for (const conn of conns) {
      if (conn.proven !== null) proven++
      if (conn.cut) cut++
    }
    return { ...this.counts, proven, cut }
  }
}
