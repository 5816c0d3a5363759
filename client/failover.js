// The failover policy, written down once. When an attempt ends without an answer, the first
// rule that matches decides what happens to the request:
//
//   0. it was refused with an error that says a retry makes no sense (`retryable` false)
//                                           -> fail with it
//   T. the worker thread running it on the peer ended (crashed, exited): an idempotent call
//      that ended no thread before goes to another peer at once, within maxAttempts and the
//      budget; any other fails with the peer's error, so a request that kills every thread
//      it reaches takes down two threads of the fleet, never all
//   1. it has used `maxAttempts`            -> refused: fail with why it was refused;
//      lost: fail ConnectionLostError; timed out: keep waiting for the answer
//   2. its connection was lost, and it is not idempotent -> fail ConnectionLostError
//      (it may or may not have run; only the caller can tell whether to send it again)
//   3. its attempt timed out and it is not idempotent   -> keep waiting for the answer
//   4. its connection was lost for the first time -> send it to another peer, outside the
//      retry budget: the peer went away holding it (a crash hands back its whole queue at
//      once), and moving it adds no load; only a call lost again draws on the budget, so a
//      request that kills every peer it reaches is not re-sent round the fleet
//   5. the retry budget is spent             -> refused: fail with why; lost: fail
//      ConnectionLostError, saying the budget stopped it; timed out: keep waiting
//   6. otherwise                             -> send it to a peer it has not tried yet:
//      at once when it was refused (the peer never took it), after a short jittered pause
//      when it is in doubt (timed out, connection lost)
//
// "Refused" means the peer certainly did not run it: busy, draining, not serving the method,
// not connected, or the frame was refused by ZeroMQ. Those are retried whether the request is
// idempotent or not, as the refusal's error allows (its `retryable`: protocol/errors.js).
// decide() writes to nothing: it reads the call and whether the retry budget has a retry left,
// and returns the decision: a retry that draws on the budget says so (`spend`), for the caller
// to take, and one the budget stopped says so (`budgetSpent`), for the caller to count. The
// table of cases both languages' tests read is protocol/failover-table.json.
import { ConnectionLostError } from '../protocol/errors.js'

export const Outcome = Object.freeze({ REFUSED: 'refused', LOST: 'lost', ATTEMPT_TIMEOUT: 'attempt-timeout', THREAD_ENDED: 'thread-ended' })

const JITTER_MS = 20 // in-doubt retries spread over this, so a crowd of them does not land at once

/**
 * @param {{ attempts: number, losses: number, endedThread: boolean, idempotent: boolean, method: string, lastError: Error|null }} call  read, never written
 * @param {string} outcome  one of Outcome
 * @param {{ maxAttempts: number, budgetLeft: boolean, random: () => number, endpoint: string, error?: Error }} ctx  `budgetLeft`: whether the retry budget allows one more; `error`: the peer's, for THREAD_ENDED
 * @returns {{ action: 'retry', delay: number, spend?: true } | { action: 'wait', budgetSpent?: true } | { action: 'fail', error: Error, budgetSpent?: true }}
 */
export function decide (call, outcome, ctx) {
  const refused = outcome === Outcome.REFUSED
  // An idempotent call lost is `retryable`: the caller may send it again (zeromesh/http answers 503).
  const lost = (why) => new ConnectionLostError(`zeromesh: lost the connection to ${ctx.endpoint} while "${call.method}" was in flight; ${why}, and it may or may not have run`, { retryable: call.idempotent })
  const giveUp = (why) => refused ? { action: 'fail', error: call.lastError } : outcome === Outcome.LOST ? { action: 'fail', error: lost(why) } : { action: 'wait' }
  const jitter = () => Math.floor(ctx.random() * JITTER_MS)
  if (refused && call.lastError?.retryable === false) return { action: 'fail', error: call.lastError }
  if (outcome === Outcome.THREAD_ENDED) {
    if (!call.idempotent || call.endedThread || call.attempts - (call.losses > 0 ? 1 : 0) >= ctx.maxAttempts) return { action: 'fail', error: ctx.error }
    if (!ctx.budgetLeft) return { action: 'fail', error: ctx.error, budgetSpent: true }
    return { action: 'retry', delay: 0, spend: true }
  }
  // The first attempt lost with its connection is not counted: its peer went away holding it.
  if (call.attempts - (call.losses > 0 ? 1 : 0) >= ctx.maxAttempts) return giveUp(`it used its ${ctx.maxAttempts} attempts (maxAttempts), besides one lost with its peer`)
  if (outcome === Outcome.LOST && !call.idempotent) return { action: 'fail', error: lost('it is not idempotent, so it was not retried') }
  if (outcome === Outcome.ATTEMPT_TIMEOUT && !call.idempotent) return { action: 'wait' }
  if (outcome === Outcome.LOST && call.losses === 0) return { action: 'retry', delay: jitter() }
  if (!ctx.budgetLeft) return { ...giveUp('the retry budget was spent (many retries lately: a sick cluster is not stormed), so it was not retried'), budgetSpent: true }
  return { action: 'retry', delay: refused ? 0 : jitter(), spend: true }
}
