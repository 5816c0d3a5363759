// Questions asked of one endpoint and waited for: a frame with a sequence number goes out to
// that endpoint, and its answer is matched by the number *and* by the endpoint it came from
// (no one else may answer it), or the question ends with null at its timeout, when its send
// fails, or when the endpoint is forgotten. The one place for the "seq -> pending -> timeout"
// bookkeeping: a client's questions (what a peer serves, liveness, key proofs, member lists),
// and a peer's gossip (peer/gossip-transport.js).
//
// With `lateMemory`, the seqs of the last questions that timed out are remembered with their
// endpoint, so an answer that comes after its timeout is told apart (LATE) from one that was
// never asked for (NONE): a stalled connection delivers them all at once when it recovers.

/** What answer() did with an answer. */
export const Answer = Object.freeze({
  TAKEN: 1, // it ended its question
  NONE: 0, //  no question with that seq is out (or it was not asked of that endpoint)
  LATE: 2, //  its question timed out (remembered with lateMemory), and it came from the endpoint asked
  STRAY: 3, // a question with that seq is out, to another endpoint
})

export class Questions {
  /**
   * @param {object} o
   * @param {(endpoint: string, frames: any[], done: (code: string|null) => void) => void} o.send
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {number} [o.lateMemory]  questions that timed out to remember (0: none)
   */
  constructor (o) {
    this.o = o
    this.seq = 0
    this.pending = new Map() // seq -> { endpoint, done, timer }
    this.lateMemory = o.lateMemory ?? 0
    this.expired = new Map() // seq -> endpoint, of the last lateMemory questions that timed out
  }

  /**
   * Sends `frameOf(seq)` to `endpoint`; `done(answer)` is called once, with the answer as it
   * arrives (in the same turn: a caller can act on it before anything else runs), or with null
   * after `timeoutMs`. Returns the question's seq.
   */
  ask (endpoint, frameOf, timeoutMs, done) {
    const seq = this.seq = this.seq >= Number.MAX_SAFE_INTEGER ? 1 : this.seq + 1
    const timer = this.o.clock.setTimeout(() => this.timedOut(seq), timeoutMs)
    timer?.unref?.() // a forgotten client or peer must not be kept alive by a question
    this.pending.set(seq, { endpoint, done, timer })
    this.o.send(endpoint, [frameOf(seq)], (code) => { if (code !== null) this.end(seq, null) })
    return seq
  }

  /** Ends question `seq`, if it is still out, with `answer`. */
  end (seq, answer) {
    const p = this.pending.get(seq)
    if (p === undefined) return false
    this.pending.delete(seq)
    this.o.clock.clearTimeout(p.timer)
    p.done(answer)
    return true
  }

  timedOut (seq) {
    const p = this.pending.get(seq)
    if (p === undefined) return
    if (this.lateMemory > 0) {
      this.expired.set(seq, p.endpoint)
      if (this.expired.size > this.lateMemory) this.expired.delete(this.expired.keys().next().value)
    }
    this.end(seq, null)
  }

  /** An answer `msg` with `seq` from `endpoint`: ends its question (TAKEN), or says why not (Answer). */
  answer (endpoint, seq, msg) {
    const p = this.pending.get(seq)
    if (p === undefined) {
      if (this.expired.size === 0 || this.expired.get(seq) !== endpoint) return Answer.NONE
      this.expired.delete(seq)
      return Answer.LATE
    }
    if (p.endpoint !== endpoint) return Answer.STRAY
    this.end(seq, msg)
    return Answer.TAKEN
  }

  /** Whether a question is out to `endpoint`. */
  asking (endpoint) {
    for (const p of this.pending.values()) if (p.endpoint === endpoint) return true
    return false
  }

  /** The questions out to `endpoint` end with null (its connection went down, or it was dropped). */
  forget (endpoint) {
    for (const [seq, p] of [...this.pending]) if (p.endpoint === endpoint) this.end(seq, null)
  }

  /** Every question out ends with null. */
  stop () {
    for (const seq of [...this.pending.keys()]) this.end(seq, null)
  }
}
