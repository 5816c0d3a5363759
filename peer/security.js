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
  /**
   * @param {object} options  the peer's resolved options (security, clock, logger, limits)
   * @param {import('./connections.js').ConnectionTable} connections  the peer's client connections
   */
  constructor (options, connections) {
    this.options = options
    this.connections = connections
    const sec = options.security
    this.sealKey = sec ? sealKey(clusterSecretBytes(sec)) : null // membership requests need it when secured
    // Which key each client connection holds, as the clients prove it: revoking a key cuts
    // its connections (key-proofs.js).
    this.keyProofs = sec
      ? new KeyProofs({ cluster: { secret: clusterSecretBytes(sec), publicKey: z85Decode(sec.cluster.publicKey) }, keyText: z85Encode, allowed: () => sec.allowed })
      : null
    this.counts = { refused: {}, unsealed: 0, badSeals: 0, reloads: 0 }
    this.watch = null
  }

  /** Seals a membership request for another member (null on a plain peer: sent as it is). */
  get sealer () {
    return this.sealKey === null ? null : (frame) => seal(this.sealKey, frame)
  }

  /**
   * A frame from a connection cut at a revocation (conn.cut): a KEY_PROOF of an allowed key or
   * a good seal lets it be answered again (returns the membership request a seal carries, to
   * be taken); anything else is dropped and counted.
   */
  fromCut (conn, frame) {
    let msg = null
    try { msg = decode(frame, this.options) } catch {}
    if (msg?.type === MessageType.KEY_PROOF) { this.prove(conn, msg); return null }
    const req = msg?.type === MessageType.SEALED ? this.unseal(msg) : null
    if (req === null) { this.keyProofs.counts.cutFrames++; return null }
    this.keyProofs.member(conn)
    return req
  }

  /** A message from `conn` other than a seal or a proof (a secured peer remembers it until it proves a key: key-proofs.js). */
  seen (conn) {
    this.keyProofs?.seen(conn)
  }

  /** `conn` sent a good seal: a member's. */
  member (conn) {
    this.keyProofs?.member(conn)
  }

  /** What a PONG to `conn` adds: a challenge to prove its key with (PROTOCOL.md 4.9), on a secured peer. */
  challenge (conn) {
    return this.keyProofs === null ? null : this.keyProofs.challenge(conn)
  }

  /** `conn` asked for work (a connection that never proves its key is remembered: key-proofs.js). */
  asked (conn, now) {
    this.keyProofs?.asked(conn, now)
  }

  prove (conn, msg) {
    this.keyProofs?.prove(conn, msg.key, msg.mac)
  }

  /**
   * Its part of the socket's message table (core.js): a key proof, and the membership requests
   * `gossip(conn, req)` answers, sealed or (on a plain peer only: in a secured cluster clients
   * connect too) not; `malformed()` counts one it drops.
   */
  routes (gossip, malformed) {
    const unsealed = (conn, msg) => { if (this.takesUnsealed()) gossip(conn, msg); else malformed() }
    return {
      [MessageType.KEY_PROOF]: (conn, msg) => this.prove(conn, msg),
      [MessageType.PROBE]: unsealed,
      [MessageType.PROBE_REQ]: unsealed,
      [MessageType.SYNC]: unsealed,
      [MessageType.SEALED]: (conn, msg) => {
        const req = this.unseal(msg) // taken when its tag checks out
        if (req === null) { malformed(); return }
        this.member(conn) // a member's connection, never cut
        gossip(conn, req)
      },
    }
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
    const revoked = this.keyProofs?.revoke(keys, this.connections.values(), clock.now()) ?? { cut: [], closeAll: false }
    streams?.cut(revoked.cut) // the streams of a revoked key end with its connections
    if (revoked.closeAll && transport?.rebind) {
      logger.warn({}, 'a key was revoked while connections that never proved their key were about: closing every connection')
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
      keys: p === null ? null : p.stats(this.connections.values()),
    }
  }
}
