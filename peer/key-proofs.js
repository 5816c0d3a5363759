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
import { newChallenge, checkKeyProof } from '../protocol/key-proof.js'

const MAX_CHALLENGES = 4096 //  challenges out at once (a PONG each); the oldest go first
const MAX_PROVEN = 65536 //     connections whose key is known
const MAX_UNPROVEN = 4096 //    connections seen asking without a proof (only whether any are)
const UNPROVEN_FOR_MS = 10 * 60 * 1000 // a requester without a proof counts this long
const MAX_SEEN = 65536 //       connections seen that proved nothing (cut at a revocation); the oldest go first
const MAX_MEMBERS = 4096 //     connections that sealed: members'

export class KeyProofs {
  /**
   * @param {object} o
   * @param {{ secret: Buffer, publicKey: Buffer }} o.cluster  raw 32-byte keys
   * @param {(raw: Buffer) => string} o.keyText  a raw public key as the allow-list writes it (Z85)
   * @param {() => Set<string>} o.allowed  the keys allowed now
   * @param {{ now(): number }} o.clock
   */
  constructor (o) {
    this.o = o
    this.challenges = new Map() // connection key -> challenge (Buffer)
    this.proven = new Map() //     connection key -> client key (Z85)
    this.cut = new Set() //        connection keys of revoked keys: no more answers
    this.unproven = new Map() //   connection key -> when it last asked without a proof
    this.seenUnproven = new Set() // connection keys seen that proved nothing and sealed nothing
    this.members = new Set() //    connection keys that sent a good seal: members', never cut
    this.lastAllowed = new Set(o.allowed())
    this.counts = { proofs: 0, badProofs: 0, cutConnections: 0, cutUnproven: 0, uncut: 0, cutFrames: 0, resets: 0 }
  }

  /** A message from `client` (any but a seal or a proof): remembered until it proves a key, so a revocation can cut it. */
  seen (client) {
    if (this.seenUnproven.has(client) || this.proven.has(client) || this.members.has(client)) return
    if (this.seenUnproven.size >= MAX_SEEN) this.seenUnproven.delete(this.seenUnproven.values().next().value)
    this.seenUnproven.add(client)
  }

  /** `client` sent a good seal: a member's connection, answered whatever the allow-list says of client keys. */
  member (client) {
    if (this.members.has(client)) return
    if (this.members.size >= MAX_MEMBERS) this.members.delete(this.members.values().next().value)
    this.members.add(client)
    this.seenUnproven.delete(client)
    if (this.cut.delete(client)) this.counts.uncut++
  }

  /** A challenge for the connection `client`, to go in its PONG. */
  challenge (client) {
    if (this.challenges.size >= MAX_CHALLENGES) this.challenges.delete(this.challenges.keys().next().value)
    const ch = newChallenge()
    this.challenges.set(client, ch)
    return ch
  }

  /** A KEY_PROOF from `client`: true if it proves an allowed key on this connection. */
  prove (client, key, mac) {
    const ch = this.challenges.get(client)
    if (ch === undefined || !checkKeyProof(this.o.cluster, key, ch, mac)) { this.counts.badProofs++; return false }
    this.challenges.delete(client)
    const text = this.o.keyText(key)
    if (!this.o.allowed().has(text)) { this.counts.badProofs++; return false }
    if (this.proven.size >= MAX_PROVEN) this.proven.delete(this.proven.keys().next().value)
    this.proven.set(client, text)
    this.unproven.delete(client)
    this.seenUnproven.delete(client)
    if (this.cut.delete(client)) this.counts.uncut++ // cut while its proof was on its way: answered again
    this.counts.proofs++
    return true
  }

  /** A request from `client`: remembered if it has proved nothing (see needsReset). */
  asked (client, now) {
    if (this.proven.has(client)) return
    if (this.unproven.size >= MAX_UNPROVEN && !this.unproven.has(client)) this.unproven.delete(this.unproven.keys().next().value)
    this.unproven.set(client, now)
  }

  /**
   * The allow-list changed to `allowed`: when it dropped a key, the connections that proved a
   * key no longer on it are cut, and so are those seen that proved nothing. Returns whether
   * every connection must be closed as well: a key was revoked while connections that never
   * proved a key asked for something in the last 10 minutes (they would stay cut for good).
   */
  revoke (allowed, now) {
    const removedKeys = [...this.lastAllowed].some((k) => !allowed.has(k))
    this.lastAllowed = new Set(allowed)
    for (const [client, key] of this.proven) {
      if (allowed.has(key)) continue
      this.proven.delete(client)
      if (this.cut.size < MAX_PROVEN + MAX_SEEN) this.cut.add(client)
      this.counts.cutConnections++
    }
    if (removedKeys) {
      for (const client of this.seenUnproven) {
        if (this.cut.size < MAX_PROVEN + MAX_SEEN) this.cut.add(client)
        this.counts.cutUnproven++
      }
      this.seenUnproven.clear()
    }
    for (const [client, at] of this.unproven) if (now - at > UNPROVEN_FOR_MS) this.unproven.delete(client)
    return removedKeys && this.unproven.size > 0
  }

  /** Every connection was closed (the listener bound again): nothing known holds. */
  reset () {
    this.challenges.clear()
    this.proven.clear()
    this.cut.clear()
    this.unproven.clear()
    this.seenUnproven.clear()
    this.members.clear()
    this.counts.resets++
  }
}
