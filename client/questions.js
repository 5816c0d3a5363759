// Questions a client asks one peer and waits for: a frame with a sequence number out on that
// peer's connection, its answer matched by the number and the connection it came on, or null
// at the timeout (or when the send fails, or the peer is forgotten). One place for the
// "seq -> pending -> timeout" bookkeeping of the service question and the liveness check.

export class Questions {
  /**
   * @param {object} o
   * @param {(endpoint: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   */
  constructor (o) {
    this.o = o
    this.seq = 0
    this.pending = new Map() // seq -> { endpoint, finish }
  }

  /**
   * Sends `frameOf(seq)` to `endpoint`; `done(answer)` is called once, with the answer as it
   * arrives (in the same turn: a caller can act on it before anything else runs), or with null
   * after `timeoutMs`. Returns the question's seq.
   */
  ask (endpoint, frameOf, timeoutMs, done) {
    const seq = this.seq = this.seq >= Number.MAX_SAFE_INTEGER ? 1 : this.seq + 1
    const timer = this.o.clock.setTimeout(() => finish(null), timeoutMs)
    timer?.unref?.() // a forgotten client must not be kept alive by a question
    const finish = (answer) => {
      if (!this.pending.has(seq)) return
      this.pending.delete(seq)
      this.o.clock.clearTimeout(timer)
      done(answer)
    }
    this.pending.set(seq, { endpoint, finish })
    this.o.send(endpoint, [frameOf(seq)], (code) => { if (code !== null) finish(null) })
    return seq
  }

  /** An answer `msg` with `seq` from `endpoint`: resolves its question; false when none is out. */
  answer (endpoint, seq, msg) {
    const p = this.pending.get(seq)
    if (p === undefined || p.endpoint !== endpoint) return false
    p.finish(msg)
    return true
  }

  /** Whether a question is out to `endpoint`. */
  asking (endpoint) {
    for (const p of this.pending.values()) if (p.endpoint === endpoint) return true
    return false
  }

  /** The questions out to `endpoint` end with null (its connection went down, or it was dropped). */
  forget (endpoint) {
    for (const p of [...this.pending.values()]) if (p.endpoint === endpoint) p.finish(null)
  }

  stop () {
    for (const p of [...this.pending.values()]) p.finish(null)
  }
}
