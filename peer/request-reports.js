// What a peer logs about the requests it answers, at --log-level debug only: a handler that
// took SLOW_MS or more, and requests it refused (unknown method, busy, draining, invalid), each
// kind and method once a minute with how many came since (HandshakeReports.reportable, the
// peer's one rule for repeated reports). The dispatcher calls it only when debug is on.
import { Status } from '../protocol/constants.js'

const SLOW_MS = 1000 // a handler that takes this long is logged
const REFUSALS = { [Status.UNKNOWN_METHOD]: 'unknown method', [Status.BUSY]: 'busy', [Status.DRAINING]: 'draining', [Status.INVALID_REQUEST]: 'invalid' }

/**
 * @param {{ debug: Function }} logger
 * @param {{ reportable(id: string): number|null }} reports
 * @param {{ now(): number }} clock
 * @returns {(req: { id: number, method: string }, entry: unknown[], arrived: number) => void}
 *   the dispatcher's `debug`: called with each request, its reply entry and when it arrived
 */
export function requestReporter (logger, reports, clock) {
  return (req, entry, arrived) => {
    const ms = clock.now() - arrived
    if (entry[1] === Status.OK || entry[1] === Status.VALUES || entry[1] === Status.REMOTE) {
      if (ms >= SLOW_MS) logger.debug({ method: req.method, ms: Math.round(ms), requestId: req.id }, `slow handler: ${req.method} took ${Math.round(ms)} ms`)
      return
    }
    const why = REFUSALS[entry[1]] ?? `status ${entry[1]}`
    const repeats = reports.reportable(`req|${why}|${req.method}`)
    if (repeats !== null) logger.debug({ method: req.method, refused: why, repeats }, `refused a request for ${req.method}: ${why}${repeats ? ` (and ${repeats} like it in the last minute)` : ''}`)
  }
}
