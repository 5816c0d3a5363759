// What a peer says about handshakes, and how often. Refused handshakes (its own socket's) and
// failed ones (its handshakes with members and seeds) are logged and told as events once per
// reason and address a minute, with how many came since, so a client retrying a bad key does
// not flood the logs; `reportable` is that rule, for the peer's other repeated reports too.

const REPORT_MS = 60000 // one report per id a minute
const MAX_IDS = 1024 //    ids remembered; past it the memory starts over (many addresses)

export class HandshakeReports {
  /**
   * @param {object} o
   * @param {{ now(): number }} o.clock
   * @param {{ warn: Function }} o.logger
   * @param {(event: string, payload: object) => void} o.tell
   * @param {Record<string, number>} o.refused  counts by reason, kept by the peer's stats
   */
  constructor (o) {
    this.o = o
    this.reports = new Map() // id -> { at, since } of the last report
  }

  /** Null when `id` was reported less than a minute ago (counted), else the count since its last report. */
  reportable (id) {
    const now = this.o.clock.now()
    const last = this.reports.get(id)
    if (last !== undefined && now - last.at < REPORT_MS) { last.since++; return null }
    if (this.reports.size >= MAX_IDS) this.reports.clear()
    this.reports.set(id, { at: now, since: 0 })
    return last?.since ?? 0
  }

  /** A handshake the peer's socket refused: counted by reason, reported with a 'refused' event. */
  refused ({ reason, key, address }) {
    this.o.refused[reason] = (this.o.refused[reason] ?? 0) + 1
    const repeats = this.reportable(`in|${reason}|${address ?? ''}`)
    if (repeats === null) return
    this.o.logger.warn({ reason, key, address, repeats }, `refused a handshake: ${reason}${key ? ` (key ${key})` : ''}${address ? ` from ${address}` : ''}${repeats ? `; ${repeats} more like it in the last minute` : ''}`)
    this.o.tell('refused', { reason, key, address, repeats })
  }

  /**
   * The peer's own handshake with a member or seed failed (gossip socket): that end does not
   * hold the same cluster key, or runs plain while this peer runs CURVE (or the other way
   * round). Reported with a 'handshake-failed' event.
   */
  failed (endpoint, { kind, code }) {
    const repeats = this.reportable(`out|${endpoint}`)
    if (repeats === null) return
    const why = kind === 'auth' ? 'it refused this peer\'s cluster key' : code === 'ERR_ZMTP_MECHANISM_MISMATCH' ? 'one side runs CURVE, the other plain' : `${code ?? kind}: it may hold another cluster key`
    this.o.logger.warn({ member: endpoint, reason: why, repeats }, `cannot handshake with ${endpoint}: ${why}${repeats ? `; ${repeats} more failures in the last minute` : ''}`)
    this.o.tell('handshake-failed', { endpoint, reason: why, repeats })
  }
}
