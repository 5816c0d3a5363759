// Which allowed key each client connection of a secured peer holds, as the clients prove it
// (protocol/key-proof.js, PROTOCOL.md 4.9), so that revoking a key cuts its open connections
// (README, Security): once the allow-list no longer holds a key, the connections that proved
// it get no more answers, at once, and nobody else notices. A connection that asked for
// requests without proving a key (an older client, or one written from an older PROTOCOL.md)
// could hold any key: when a key is revoked while such connections are about, the peer has
// to close every connection (`needsReset`), the only way libzmq offers.
import { newChallenge, checkKeyProof } from '../protocol/key-proof.js'

const MAX_CHALLENGES = 4096 //  challenges out at once (a PONG each); the oldest go first
const MAX_PROVEN = 65536 //     connections whose key is known
const MAX_UNPROVEN = 4096 //    connections seen asking without a proof (only whether any are)
const UNPROVEN_FOR_MS = 10 * 60 * 1000 // a requester without a proof counts this long

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
    this.lastAllowed = new Set(o.allowed())
    this.counts = { proofs: 0, badProofs: 0, cutConnections: 0, cutFrames: 0, resets: 0 }
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
   * The allow-list changed to `allowed`: connections that proved a key no longer on it are
   * cut. Returns whether every connection must be closed as well: a key was revoked while
   * connections that never proved a key asked for something in the last 10 minutes.
   */
  revoke (allowed, now) {
    for (const [client, key] of this.proven) {
      if (allowed.has(key)) continue
      this.proven.delete(client)
      if (this.cut.size < MAX_PROVEN) this.cut.add(client)
      this.counts.cutConnections++
    }
    const removedKeys = [...this.lastAllowed].some((k) => !allowed.has(k))
    this.lastAllowed = new Set(allowed)
    for (const [client, at] of this.unproven) if (now - at > UNPROVEN_FOR_MS) this.unproven.delete(client)
    return removedKeys && this.unproven.size > 0
  }

  /** Every connection was closed (the listener bound again): nothing known holds. */
  reset () {
    this.challenges.clear()
    this.proven.clear()
    this.cut.clear()
    this.unproven.clear()
    this.counts.resets++
  }
}
