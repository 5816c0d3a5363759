// Asking a peer itself whether it is alive (PING on its own connection; the PONG carries its
// own incarnation and state, PROTOCOL.md 4.4), in two cases where the client's other sources
// can be wrong:
//
// - a member list shows a connected, up peer dead or left: one list is one peer's word, and a
//   liar's must not take an honest peer out of rotation. One that answers alive stays; one
//   that says it is leaving, one older than `inc`, or one that does not answer is drained;
// - a peer was reported down: ZeroMQ's connection events name the endpoint, not the
//   connection, so a late "disconnect" of an old connection after the handshake of a new one
//   (a redial, a reconnect after a freeze) reports a live peer down, and no handshake comes
//   again. It is asked after DOWN_CHECK_MS, then less and less often while it stays down; one
//   that answers is up.
import { encodePing } from '../protocol/codec.js'
import { MemberState } from '../protocol/constants.js'

const DOWN_CHECK_MS = 1000 //     a peer reported down is asked itself after this, doubling...
const DOWN_CHECK_MAX_MS = 8000 // ...to this, while it stays down and known

export class Liveness {
  /**
   * @param {object} o
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {import('../transport/questions.js').Questions} o.questions
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {number} o.timeout                 wait this long for a PONG
   * @param {{ verified: number }} o.counts    the client's counters
   * @param {() => boolean} o.closed           the client is closing
   * @param {(endpoint: string, reason: string) => void} o.onUp  a peer reported down answered
   */
  constructor (o) {
    this.o = o
  }

  /** `peer` stands where the client left it: still in the table, the client still open. */
  current (peer) {
    return !this.o.closed() && this.o.table.get(peer.endpoint) === peer
  }

  /** A list shows `peer` (connected, up) dead or left, for reason `why`: ask it before draining it. */
  verifyGone (peer, why) {
    if (peer.verifying) return
    peer.verifying = true
    this.o.questions.ask(peer.endpoint, encodePing, this.o.timeout, (pong) => this.verified(peer, why, pong))
  }

  verified (peer, why, pong) {
    peer.verifying = false
    if (!this.current(peer) || !peer.gone) return // dropped, or listed alive meanwhile
    const inc = pong?.meta.inc
    if (pong !== null && typeof inc === 'number' && pong.meta.st !== MemberState.LEFT) {
      this.o.counts.verified++
      peer.gone = false
      if (inc > peer.claim.incarnation) peer.claim = { incarnation: inc, state: MemberState.ALIVE }
      return
    }
    if (peer.state !== 'up') return
    peer.listedGone = true
    this.o.table.setState(peer, 'draining', why)
  }

  /** `peer` was reported down: ask it after `ms`, and again, less often, while it stays down. */
  checkDown (peer, ms = DOWN_CHECK_MS) {
    if (peer.downCheck != null) return
    peer.downCheck = this.o.clock.setTimeout(() => {
      peer.downCheck = null
      if (!this.current(peer) || peer.state !== 'down') return
      this.o.questions.ask(peer.endpoint, encodePing, this.o.timeout, (pong) => {
        if (!this.current(peer) || peer.state !== 'down') return
        if (pong !== null) return this.o.onUp(peer.endpoint, 'answered while reported down')
        this.checkDown(peer, Math.min(DOWN_CHECK_MAX_MS, ms * 2))
      })
    }, ms)
    peer.downCheck.unref?.()
  }

  /** `peer` is dropped, or the client closes: no more questions to it. */
  stop (peer) {
    if (peer.downCheck != null) { this.o.clock.clearTimeout(peer.downCheck); peer.downCheck = null }
  }
}
