// A stopping peer's drain, the two waits between its leave and its close: the work in flight
// finishes (within the drain timeout; streams still open then end DRAINING, retryable), then
// the socket stays open until no message came for QUIET_MS. A client that sent nothing lately
// may not have heard the peer is leaving yet: a request it sends now is answered DRAINING (not
// run: it goes elsewhere), where one that found the socket closed would be lost in flight, and
// a non-idempotent one would fail with CONNECTION_LOST. A client that gets DRAINING stops
// sending, so the quiet comes quickly.
import { Status } from '../protocol/constants.js'

export const QUIET_MS = 100 //     a stopping peer closes once no message came for this long...
const QUIET_STEP_MS = 20 //        ...checked this often

/**
 * New work is refused from now on (DRAINING); resolves once the work in flight is over, or at
 * `until` (the clock's time), when streams still open end DRAINING.
 * @param {object} o
 * @param {{ inflight: number, drain(): Promise<void> }} o.dispatcher
 * @param {{ endAll(status: number, message: string): void }} o.streams
 * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
 * @param {number} o.drainTimeout  ms
 * @param {((fields: object, message: string) => void)|null} o.debug  told how it went, at --log-level debug only
 */
export async function finishInFlight ({ dispatcher, streams, clock, drainTimeout, debug }) {
  let timer
  const timedOut = new Promise((resolve) => { timer = clock.setTimeout(resolve, drainTimeout) })
  const t0 = clock.now()
  await Promise.race([dispatcher.drain(), timedOut])
  clock.clearTimeout(timer)
  const ms = Math.round(clock.now() - t0)
  debug?.({ inflight: dispatcher.inflight, ms }, dispatcher.inflight === 0 ? `in-flight requests finished after ${ms} ms` : `drain timeout: ${dispatcher.inflight} requests still running`)
  // Streams still open at the drain timeout end with a retryable DRAINING (the client may resume elsewhere).
  streams.endAll(Status.DRAINING, `peer stopped: its drain timeout (${drainTimeout} ms) passed while the stream was open`)
}

/**
 * Resolves once no message came for QUIET_MS, or at `until` (the clock's time).
 * @param {{ now(): number, setTimeout: Function }} clock
 * @param {() => number} received  a count that grows with each message received
 */
export async function awaitQuiet (clock, received, until) {
  let seen = received()
  let quietSince = clock.now()
  while (clock.now() - quietSince < QUIET_MS && clock.now() < until) {
    await new Promise((resolve) => clock.setTimeout(resolve, QUIET_STEP_MS))
    if (received() !== seen) { seen = received(); quietSince = clock.now() }
  }
}
