// Lifeguard's local health ("awareness", memberlist's awareness.go): a score from 0 (healthy)
// to max that rises when this peer's own probing looks unreliable and falls as it works.
// A peer whose own link or process is the problem (lost messages, a stall) would otherwise
// suspect healthy members at full speed; with a higher score it probes less often, waits
// longer for answers and keeps suspicions longer, so the others' refutations reach it first.
//
// Raised by: a failed probe, by the number of probe-req helpers that did not even answer
// NACK (they are alive by our own view, so their silence says our messages are not getting
// through), or by 1 when there were no helpers to ask; a refutation of a suspicion of itself.
// Lowered by 1 by every probe answered.

export class Awareness {
  /** @param {number} max  the highest score: timeouts are scaled by at most max + 1 */
  constructor (max) {
    this.max = max
    this.score = 0
  }

  apply (delta) {
    this.score = Math.max(0, Math.min(this.max, this.score + delta))
  }

  /** `ms` scaled by the current health: ms x (score + 1). */
  scale (ms) {
    return ms * (this.score + 1)
  }
}
