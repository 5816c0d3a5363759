// Even load over subsets. Random subsets (subset.js) give each peer a binomial number of
// clients: at 1,000 peers and 1,000 clients with a subset of 32, the busiest peer holds 1.6-1.75x
// the mean (p99 1.41x), so a fleet had to be sized for its unluckiest peer. Clients do not know each other,
// so no client can compute an even assignment (Finagle's aperture needs each client's index);
// but each peer knows how many clients it holds, and says it (`cc` in PONG, PROTOCOL.md 4.4).
// Every `interval` (jittered), a client that subsets asks the peers it holds for their `cc`,
// and when its most crowded peer holds `threshold` times the mean of them (and at least 2 more),
// moves that one connection to the best-ranked member it does not hold (roster.js move()).
// Each move takes a client from a crowded peer to one picked at random, so the crowded ones
// shed and the spread narrows round by round; once no peer stands out nothing moves.
// In the model of 1,000 x 1,000 (sim/subset-model.js) the busiest peer goes to 1.16x the mean
// within 3 rounds, and the moves fall from about 740 a round to about 50.
import { encodePing } from '../protocol/index.js'

export const REBALANCE_THRESHOLD = 1.15 // a peer this much above its fellows' mean sheds a client
const MIN_EXCESS = 2 //                    ...and at least this many clients above it
const ASK_TIMEOUT_MS = 1000

/**
 * The peer to move a connection away from, or null: the most crowded of `counts` ([endpoint,
 * cc] of the peers held, each with its count) when it stands out from their mean.
 * @param {Array<[string, number]>} counts
 * @param {number} [threshold]
 */
export function crowded (counts, threshold = REBALANCE_THRESHOLD) {
  if (counts.length < 2) return null
  let sum = 0
  let worst = null
  for (const [ep, cc] of counts) {
    sum += cc
    if (worst === null || cc > worst[1]) worst = [ep, cc]
  }
  const mean = sum / counts.length
  return worst[1] >= threshold * mean && worst[1] >= mean + MIN_EXCESS ? worst[0] : null
}

export class Rebalancer {
  /**
   * @param {object} o
   * @param {number} o.interval  ms between rounds (0: never)
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => number} o.random
   * @param {import('../transport/questions.js').Questions} o.questions
   * @param {() => Array<{ endpoint: string, retiring: boolean }>} o.held  the peers up in the subset
   * @param {import('./roster.js').Roster} o.roster
   * @param {() => void} o.resubset  the subset is chosen again (member-lists.js)
   * @param {{ moves: number }} o.counts
   */
  constructor (o) {
    this.o = o
    this.timer = null
    this.stopped = false
  }

  start () {
    if (this.o.interval > 0) this.schedule()
  }

  schedule () {
    if (this.stopped) return
    // Jittered (0.5-1.5x), so the clients of a fleet do not all move at once.
    this.timer = this.o.clock.setTimeout(() => { this.timer = null; this.round().finally(() => this.schedule()) }, this.o.interval * (0.5 + this.o.random()))
    this.timer?.unref?.()
  }

  async round () {
    const { roster } = this.o
    if (!roster.limited()) return
    const held = this.o.held().filter((p) => !p.retiring)
    const counts = (await Promise.all(held.map((p) => this.count(p.endpoint)))).filter((x) => x !== null)
    if (this.stopped) return
    const from = crowded(counts)
    if (from === null) return
    const to = roster.candidate(new Set(held.map((p) => p.endpoint)), from)
    if (to === null) return
    roster.move(from, to)
    this.o.counts.moves++
    this.o.resubset()
  }

  /** [endpoint, cc] from its answer to a PING, or null (no answer, or a peer that says no `cc`). */
  count (endpoint) {
    return new Promise((resolve) => {
      this.o.questions.ask(endpoint, encodePing, ASK_TIMEOUT_MS, (pong) => {
        const cc = pong?.meta?.cc
        resolve(Number.isInteger(cc) && cc >= 0 ? [endpoint, cc] : null)
      })
    })
  }

  stop () {
    this.stopped = true
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer)
    this.timer = null
  }
}
