// What a secured peer keeps besides its socket's CURVE (transport/security.js): the key that
// seals membership requests (protocol/seal.js), which key each client connection proved
// (key-proofs.js), the allow-list and its reloads, and the counters of all of it. A plain
// peer has one too, with nothing to keep: its checks pass.
import { KeyProofs } from './key-proofs.js'
import { watchAllowList } from '../transport/allow-list-watch.js'
import { clusterSecretBytes } from '../transport/security.js'
import { readPublicKeys, z85Decode, z85Encode } from '../transport/keys.js'
import { sealKey, seal, unseal } from '../protocol/seal.js'
import { decode } from '../protocol/codec.js'
import { MessageType } from '../protocol/constants.js'
import { invalidArgument } from '../protocol/errors.js'

const GOSSIP_REQUESTS = new Set([MessageType.PROBE, MessageType.PROBE_REQ, MessageType.SYNC])

export class PeerSecurity {
  /** @param {object} options  the peer's resolved options (security, clock, logger, limits) */
  constructor (options) {
    this.options = options
    const sec = options.security
    this.sealKey = sec ? sealKey(clusterSecretBytes(sec)) : null // membership requests need it when secured
    // Which key each client connection holds, as the clients prove it: revoking a key cuts
    // its connections (key-proofs.js).
    this.keyProofs = sec
      ? new KeyProofs({ cluster: { secret: clusterSecretBytes(sec), publicKey: z85Decode(sec.cluster.publicKey) }, keyText: z85Encode, allowed: () => sec.allowed, clock: options.clock })
      : null
    this.counts = { refused: {}, unsealed: 0, badSeals: 0, reloads: 0 }
    this.watch = null
  }

  /** Seals a membership request for another member (null on a plain peer: sent as it is). */
  get sealer () {
    return this.sealKey === null ? null : (frame) => seal(this.sealKey, frame)
  }

  /** Whether the connection `key` was cut at a revocation: it gets no more answers, but may still prove an allowed key or seal (fromCut). */
  isCut (key) {
    const p = this.keyProofs
    return p !== null && p.cut.size > 0 && p.cut.has(key)
  }

  /**
   * A frame from a cut connection: a KEY_PROOF of an allowed key or a good seal lets it be
   * answered again (returns the membership request a seal carries, to be taken); anything
   * else is dropped and counted.
   */
  fromCut (key, frame) {
    let msg = null
    try { msg = decode(frame, this.options) } catch {}
    if (msg?.type === MessageType.KEY_PROOF) { this.prove(key, msg); return null }
    const req = msg?.type === MessageType.SEALED ? this.unseal(msg) : null
    if (req === null) { this.keyProofs.counts.cutFrames++; return null }
    this.keyProofs.member(key)
    return req
  }

  /** A message from connection `key` other than a seal or a proof (a secured peer remembers it until it proves a key: key-proofs.js). */
  seen (key) {
    this.keyProofs?.seen(key)
  }

  /** Connection `key` sent a good seal: a member's. */
  member (key) {
    this.keyProofs?.member(key)
  }

  /** What a PONG to connection `key` adds: a challenge to prove its key with (PROTOCOL.md 4.9), on a secured peer. */
  challenge (key) {
    return this.keyProofs === null ? null : this.keyProofs.challenge(key)
  }

  /** Connection `key` asked for work (a connection that never proves its key is remembered: key-proofs.js). */
  asked (key, now) {
    this.keyProofs?.asked(key, now)
  }

  prove (key, msg) {
    this.keyProofs?.prove(key, msg.key, msg.mac)
  }

  /** An unsealed membership request: taken on a plain peer; on a secured one (clients connect too) counted and dropped. */
  takesUnsealed () {
    if (this.sealKey === null) return true
    this.counts.unsealed++
    return false
  }

  /** The membership request a SEALED message carries, or null (counted) when its tag does not check out. */
  unseal (msg) {
    const inner = this.sealKey === null ? null : unseal(this.sealKey, msg)
    let req = null
    if (inner !== null) {
      try { req = decode(inner, this.options) } catch { req = null }
    }
    if (req === null || !GOSSIP_REQUESTS.has(req.type)) {
      this.counts.badSeals++
      return null
    }
    return req
  }

  /** Watches the allow-list's files (a Kubernetes Secret or ConfigMap update sends no signal) and calls `reload` when they change. */
  start (reload) {
    const sec = this.options.security
    if (sec && sec.allowItems.length > 0) this.watch = watchAllowList(sec.allowItems, this.options.clock, reload)
  }

  stop () {
    this.watch?.stop()
  }

  /**
   * Reads the allow-list again and lets in exactly those keys from now on (Peer.reloadAllowList).
   * `transport` and `streams` are the peer's, or null before it started; `closeAll()` closes
   * every connection (Peer.closeConnections).
   */
  async reload (transport, streams, closeAll) {
    const { security: sec, logger, clock } = this.options
    if (!sec) throw invalidArgument('reloadAllowList() needs a secured peer (security: { clusterKey, allow })')
    let keys
    try {
      keys = readPublicKeys(sec.allowItems)
    } catch (err) {
      logger.error({ err: err.message }, `allow-list NOT changed: ${err.message}`)
      throw err
    }
    sec.allowed = keys
    transport?.setAllowed?.(keys)
    this.counts.reloads++
    // Connections that proved a key no longer allowed get no more answers from now; if any
    // connection that proved nothing asked for work lately, it may hold such a key, and only
    // closing every connection reaches it (clients reconnect, prove, and carry on).
    const rebind = this.keyProofs?.revoke(keys, clock.now()) && transport?.rebind
    streams?.cut(this.keyProofs?.cut ?? []) // the streams of a revoked key end with its connections
    if (rebind) {
      logger.warn({ unproven: this.keyProofs.unproven.size }, `a key was revoked while ${this.keyProofs.unproven.size} connection(s) that never proved their key were about: closing every connection`)
      await closeAll()
    }
    logger.info({ allowed: keys.size }, `allow-list read again, ${keys.size} client key${keys.size === 1 ? '' : 's'} allowed`)
    return { keys: keys.size }
  }

  /** Peer.stats().security; `handshakeFailures` are the gossip transport's. */
  stats (handshakeFailures) {
    const p = this.keyProofs
    return {
      ...this.counts,
      refused: { ...this.counts.refused },
      secured: this.sealKey !== null,
      allowed: this.options.security ? this.options.security.allowed.size : 0,
      handshakeFailures,
      keys: p === null ? null : { ...p.counts, proven: p.proven.size, cut: p.cut.size },
    }
  }
}
