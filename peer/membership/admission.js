// Admission: what a claim that came from the network may do to this peer's member table.
// Nothing from the wire is taken as is (PROTOCOL.md 4.6, "merge rules"). The rules every
// receiver applies, clients too (the horizon, only alive introduces, left is the member's own
// word), are protocol/claims.js; the others are a peer's alone:
//
//   - an incarnation beyond the horizon (wall clock + 24 h) is refused, so
//     no claim can push a member's incarnation out of reach of its own refutation;
//   - a claim about this peer that is not a plain echo of its own alive claim is refuted;
//   - `left` counts only when its author (the sender) is the member itself; relayed, it is a
//     suspicion that, unrefuted, ends in `left` (a leave told to a few, spread by gossip);
//   - a remote `dead` is taken as `suspect`: the member gets its chance to refute, and the
//     claim counts as one confirmation of the suspicion;
//   - only an alive claim introduces a member not known (as in memberlist);
//   - a member not known, or held dead or left, is brought (back) to life only on the word of
//     a member that answered this peer ("vouched": an answer on a connection this peer made
//     to that member's endpoint). Hearsay, a request anyone could have sent, makes it a
//     candidate, used only once it answers a probe of this peer's own (candidates.js).
//
// Pure: no clock, no table, no network.
import { MemberState as State } from '../../protocol/constants.js'
import { beyondHorizon, authored, isNews } from '../../protocol/claims.js'

export const Action = Object.freeze({
  APPLY: 'apply', //         put `claim` in the table
  CANDIDATE: 'candidate', // hold `claim` until the member answers a probe
  REFUTE: 'refute', //       a claim that this peer is not alive: raise its incarnation
  IGNORE: 'ignore', //       stale or equal; `claim` (as read) may still confirm a suspicion
  REFUSE: 'refuse', //       breaks a rule; counted under `reason`
})

/**
 * @param {object|undefined} held  this peer's entry for the claim's member (undefined: not known)
 * @param {{ endpoint: string, incarnation: number, state: number, meta: object, by?: string }} claim
 * @param {object} ctx
 * @param {{ endpoint: string, incarnation: number, state: number }} ctx.self
 * @param {string} ctx.author    who the claim came from: the member answering, or the `from` of a request
 * @param {boolean} ctx.vouched  it came in an answer from a member this peer contacted
 * @param {number} ctx.horizon   the highest incarnation accepted now
 * @returns {{ action: string, claim?: object, reason?: string }}
 */
export function admit (held, claim, { self, author, vouched, horizon }) {
  if (beyondHorizon(claim, horizon)) return { action: Action.REFUSE, reason: 'beyondHorizon' }
  if (claim.endpoint === self.endpoint) {
    if (claim.incarnation < self.incarnation) return { action: Action.IGNORE }
    if (claim.state === State.ALIVE && claim.incarnation === self.incarnation) return { action: Action.IGNORE }
    return { action: Action.REFUTE }
  }
  // Only an alive claim introduces a member (as memberlist): news of the death of a stranger,
  // or of a member reaped since, is no reason to add it.
  if (held === undefined && claim.state !== State.ALIVE) return { action: Action.IGNORE }
  let c = authored(claim, author)
  // A relayed leave is a suspicion that ends in `left`, not in a death (`leaving`): the member
  // may refute it, and a peer that did not hear the leave itself declares no one dead.
  if (c.state === State.DEAD) c = { ...c, state: State.SUSPECT, by: c.by ?? author, ...(claim.state === State.LEFT ? { leaving: true } : {}) }
  if (!isNews(held, c)) return { action: Action.IGNORE, claim: c }
  const wakes = c.state <= State.SUSPECT && (held === undefined || held.state > State.SUSPECT)
  if (wakes && !vouched) return { action: Action.CANDIDATE, claim: c }
  return { action: Action.APPLY, claim: c }
}
