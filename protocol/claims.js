// The rules every receiver of a membership claim applies before it takes one, peers and
// clients alike (PROTOCOL.md 4.6, rules 1-3, and the client's reading of member lists): they
// are part of the protocol, so they live here, once. What only a peer does with a claim
// (dead read as suspect, trust before use, refutation) is peer/membership/admission.js.
//
// Pure: no clock, no table, no network.
import { MemberState as State, INCARNATION_HORIZON_MS, outranks } from './constants.js'
import { isLoopback } from './endpoint.js'

/** The highest incarnation a receiver accepts when its wall clock reads `wallNow` (rule 1). */
export function incarnationHorizon (wallNow) {
  return wallNow + INCARNATION_HORIZON_MS
}

/** Rule 1: a claim above the horizon is refused, so none can push a member beyond the reach of its own refutation. */
export function beyondHorizon (claim, horizon) {
  return claim.incarnation > horizon
}

/**
 * Rule 3: `left` is the member's own word. A left claim whose author (the sender of the message
 * that carries it) is not the member itself is read as `dead`. Returns the claim as read.
 */
export function authored (claim, author) {
  return claim.state === State.LEFT && author !== claim.endpoint ? { ...claim, state: State.DEAD } : claim
}

/**
 * Whether `claim` is news against `held` (what the receiver holds for that member, or
 * undefined): rule 2, only an alive claim introduces a member not held; then the order of
 * section 4 (a higher incarnation, or at the same one a graver state).
 */
export function isNews (held, claim) {
  if (held === undefined) return claim.state === State.ALIVE
  return outranks(claim, held)
}

/**
 * Whether a receiver may take a claim about `endpoint` at all: one that runs plain by default
 * (no CURVE, and not told to run plain on purpose) stays on loopback whoever names the
 * endpoint (PROTOCOL.md 1.2). `anyHost`: it runs CURVE, or plain on purpose (--insecure).
 */
export function endpointAllowed (endpoint, anyHost) {
  return anyHost || isLoopback(endpoint)
}
