// Heartbeats of a connecting socket, sent as protocol PINGs (PROTOCOL.md 4.4, seq 0) rather
// than ZMTP's own PING commands. libzmq 4.3.5 aborts the process that answers a ZMTP PING on a
// connection it has already marked broken: a peer frozen (or stalled) with more messages
// queued to it than its inbound limit, whose client hung up meanwhile, dies on its thaw
// (`!_io_error`, stream_engine_base.cpp:310). A PING of the protocol is an ordinary message
// to libzmq, so a connection that carries no ZMTP PING cannot reach that abort.
//
// A connection that has been up and silent for `interval` gets a PING (one per interval); one
// from which nothing at all (an answer, a PONG) came for `timeout` is taken as dead:
// `silent(endpoint)`, which takes it down and dials again, as ZMTP's heartbeat timeout did.
// Nothing is sent on a connection that is receiving, so a busy one costs a counter per
// message. Connections are looked at four times per interval (or timeout, if shorter): a
// silence is noticed within a quarter of that after it is long enough.

import { encodePing, decode, hasSignature } from '../protocol/codec.js'
import { MessageType } from '../protocol/constants.js'

export const HEARTBEAT_SEQ = 0 // the seq of a heartbeat PING; questions number theirs from 1

/** The heartbeat PING's frame. */
export const HEARTBEAT_PING = encodePing(HEARTBEAT_SEQ)

const TYPE_AT = 4 // a frame's message type: after the signature (3 bytes) and the version

/**
 * The meta of `frame` when it is a heartbeat's answer (a PONG with HEARTBEAT_SEQ), else null.
 * The connector reads it and passes only its meta on (onHeartbeat), never as a message.
 */
export function heartbeatAnswer (frame) {
  if (frame.length <= TYPE_AT || frame[TYPE_AT] !== MessageType.PONG || !hasSignature(frame)) return null
  try {
    const msg = decode(frame)
    return msg.seq === HEARTBEAT_SEQ ? (msg.meta ?? {}) : null
  } catch { return null }
}

export class Heartbeats {
  /**
   * @param {object} o
   * @param {number} o.interval  a connection silent this long gets a PING (ms, > 0)
   * @param {number} o.timeout   one silent this long is dead (ms; 0: the interval, as ZMTP's)
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {(endpoint: string) => void} o.ping    sends a heartbeat PING to `endpoint`
   * @param {(endpoint: string, silentMs: number) => void} o.silent  `endpoint` went silent
   */
  constructor (o) {
    this.o = o
    this.timeout = o.timeout > 0 ? o.timeout : o.interval
    this.period = Math.max(1, Math.min(o.interval, this.timeout) / 4)
    this.lines = new Map() // endpoint -> { heard, seen, quietSince, pingedAt } of connections up
    this.timer = null
  }

  /** The connection to `endpoint` is up (its handshake completed): watched from now. */
  up (endpoint) {
    this.lines.set(endpoint, { heard: 0, seen: 0, quietSince: this.o.clock.now(), pingedAt: -Infinity })
    if (this.timer === null) this.arm()
  }

  /** The connection to `endpoint` is down or dropped: no longer watched. */
  down (endpoint) {
    this.lines.delete(endpoint)
  }

  /** A message came from `endpoint`. */
  heard (endpoint) {
    const line = this.lines.get(endpoint)
    if (line !== undefined) line.heard++
  }

  arm () {
    this.timer = this.o.clock.setTimeout(() => this.tick(), this.period)
    this.timer?.unref?.()
  }

  tick () {
    this.timer = null
    const now = this.o.clock.now()
    for (const [endpoint, line] of [...this.lines]) {
      if (line.heard !== line.seen) { // something came since the last look: quiet from now at most
        line.seen = line.heard
        line.quietSince = now
        continue
      }
      const quiet = now - line.quietSince
      if (quiet >= this.timeout) {
        this.lines.delete(endpoint)
        this.o.silent(endpoint, quiet)
      } else if (quiet >= this.o.interval && now - line.pingedAt >= this.o.interval) {
        line.pingedAt = now
        this.o.ping(endpoint)
      }
    }
    if (this.lines.size > 0) this.arm()
  }

  stop () {
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer)
    this.timer = null
    this.lines.clear()
  }
}
