// Subsetting: which of the members a client knows it connects to, so that 1,000 clients and
// 1,000 peers make about 1,000 x `size` connections, not a million (gRPC's A68 random
// subsetting, over rendezvous hashing). Pure: no clock, no sockets.
//
// Each client ranks the members by a rendezvous score of (its own random key, the member's
// endpoint): a random order of its own, stable while members come and go, so a member's death
// moves only the connections that were to it (each to that client's next-ranked member).
//
// The subset serves the methods the client calls: in turns, the method with the fewest chosen
// members that may serve it (by what they or a member with the same service digest said, or
// not known yet) takes its best-ranked one, until `size` are chosen or no method can take
// more. A client that has called nothing yet takes the `size` best-ranked members. A member counts for
// every method it serves, so one service of 50 methods spends `size` once, and a client of
// three services gets about a third of `size` for each.
//
// Moves (client/rebalance.js) bend the ranking: members the client moved to (`prefer`) rank
// first, members it moved away from (`avoid`) last, the rest as the hash has them. So a
// client's subset stays its own random one, plus the moves that evened out the peers' load.
// A client with a zone (`local`: the members known to be in it) keeps its requests there
// (zone.js), so its subset takes local members first, all of them if they fit, leaving a
// quarter of it to others for the spill: a zone's clients then share its peers evenly,
// rather than by how their random subsets happened to overlap.
import { score } from './strategies/rendezvous.js'

/**
 * @param {object} o
 * @param {string[]} o.members     endpoints of the members alive (or suspect)
 * @param {string[]} o.methods     the methods the client calls
 * @param {(endpoint: string, method: string) => boolean} o.mayServe  true when it serves the method, or may (not known yet)
 * @param {string} o.key          this client's own random key
 * @param {number} o.size         members at most; 0: all of them
 * @param {Set<string>} [o.prefer] members ranked first (moved to)
 * @param {Set<string>} [o.avoid]  members ranked last (moved away from)
 * @param {Set<string>|null} [o.local]  members in the client's zone, when it has one
 * @returns {Set<string>} the endpoints to connect to
 */
export function chooseSubset ({ members, methods, mayServe, key, size, prefer = NONE, avoid = NONE, local = null }) {
  if (size === 0 || members.length <= size) return new Set(members)
  let ranked = rank(members, key, prefer, avoid)
  if (local !== null && local.size > 0) {
    const room = size - Math.max(1, Math.floor(size / 4)) // what the zone may take; the rest spills
    const first = ranked.filter((ep) => local.has(ep) && !avoid.has(ep)).slice(0, room)
    const taken = new Set(first)
    ranked = [...ranked.filter((ep) => prefer.has(ep) && !taken.has(ep)), ...first, ...ranked.filter((ep) => !taken.has(ep) && !prefer.has(ep))]
  }
  const chosen = new Set()
  const count = new Map(methods.map((m) => [m, 0]))
  const cursor = new Map(methods.map((m) => [m, 0])) // where each method's search for a server goes on
  const open = new Set(methods) // methods that may still take a member
  while (chosen.size < size && open.size > 0) {
    let m = null
    for (const x of open) if (m === null || count.get(x) < count.get(m)) m = x
    let i = cursor.get(m)
    while (i < ranked.length && (chosen.has(ranked[i]) || !mayServe(ranked[i], m))) i++
    cursor.set(m, i)
    if (i === ranked.length) { open.delete(m); continue }
    const ep = ranked[i]
    chosen.add(ep)
    for (const x of methods) if (mayServe(ep, x)) count.set(x, count.get(x) + 1)
  }
  if (methods.length === 0) for (let i = 0; i < size; i++) chosen.add(ranked[i])
  return chosen
}

const NONE = new Set()

/** `members` by this client's ranking: `prefer` first, then by rendezvous score, `avoid` last. */
export function rank (members, key, prefer = NONE, avoid = NONE) {
  const byScore = members.map((ep) => [score(key, ep), ep]).sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1)).map((x) => x[1])
  if (prefer.size === 0 && avoid.size === 0) return byScore
  return [...byScore.filter((ep) => prefer.has(ep)), ...byScore.filter((ep) => !prefer.has(ep) && !avoid.has(ep)), ...byScore.filter((ep) => avoid.has(ep))]
}

