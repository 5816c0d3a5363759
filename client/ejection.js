// Outlier ejection: a peer whose attempts fail `after` times in a row (attempt timeouts,
// refused sends) is taken out of rotation for a while that doubles with each ejection
// (base, 2x base, ... up to max), then put back on probation. Never more than `maxShare`
// of the peers at once, and never the last peer up (a panic threshold, as in Envoy): with
// most of the cluster failing, spreading load beats concentrating it on a few.

export class Ejector {
  /**
   * @param {object} o
   * @param {import('./peer-table.js').PeerTable} o.table
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {number} o.after     failures in a row that eject
   * @param {number} o.baseMs    first ejection time
   * @param {number} o.maxMs     longest ejection time
   * @param {number} o.maxShare  share of peers that may be ejected at once, 0..1
   */
  constructor (o) {
    this.o = o
    this.count = 0
  }

  /** An attempt on `peer` failed for a reason that says something about its health. */
  failure (peer) {
    peer.streak++
    if (peer.streak < this.o.after || peer.state !== 'up') return false
    const up = this.o.table.up().length
    let ejected = 0
    for (const e of this.o.table.entries.values()) if (e.state === 'ejected') ejected++
    if (up <= 1 || ejected + 1 > Math.floor((up + ejected) * this.o.maxShare)) return false // panic threshold
    peer.ejections++
    const ms = Math.min(this.o.maxMs, this.o.baseMs * 2 ** (peer.ejections - 1))
    this.count++
    this.o.table.setState(peer, 'ejected', `ejected for ${ms} ms after ${peer.streak} failures in a row`)
    peer.ejectTimer = this.o.clock.setTimeout(() => {
      peer.ejectTimer = null
      if (peer.state !== 'ejected') return
      peer.streak = this.o.after - 1 // on probation: one more failure ejects it again, for longer
      this.o.table.setState(peer, 'up', 'back from ejection')
    }, ms)
    return true
  }

  /** An attempt on `peer` got an answer. */
  success (peer) {
    peer.streak = 0
    if (peer.ejections > 0) peer.ejections--
  }

  /**
   * The peer's connection went down: ejection ends with it, and so does its run of failures
   * (probation included): on its next connection it takes `after` failures in a row again.
   * Its ejection count stays, so one that keeps failing is still ejected for longer each time.
   */
  reset (peer) {
    if (peer.ejectTimer != null) this.o.clock.clearTimeout(peer.ejectTimer)
    peer.ejectTimer = null
    peer.streak = 0
  }
}
