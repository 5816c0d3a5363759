// zeromesh errors as HTTP answers: one mapping for every HTTP gateway in front of a mesh (an
// Express error handler, a Fastify error handler, zeromesh/nest's exception filter). Match on
// the error's stable `code`, never on its message.
//   busy, draining, no peers, no subscribers, closed -> 503 with Retry-After: nothing ran; try again soon
//   timeout                                          -> 504: no answer in time (the work may have run)
//   connection lost, idempotent (retryable)           -> 503 with Retry-After: no retry was left; sending it again is safe
//   invalid input, invalid argument                  -> 400: the caller's input (with a contract's issues)
//   anything else                                    -> 500 (a handler's own code stays in err.remoteCode)
import { BusyError, DrainingError, NoPeersError, NoSubscribersError, ClosedError, TimeoutError, InvalidArgumentError, InvalidInputError, ConnectionLostError } from '../protocol/errors.js'

/** The HTTP status of each zeromesh code that has one other than 500. */
export const httpStatusOfCode = Object.freeze({
  [BusyError.code]: 503,
  [DrainingError.code]: 503,
  [NoPeersError.code]: 503,
  [NoSubscribersError.code]: 503,
  [ClosedError.code]: 503,
  [TimeoutError.code]: 504,
  [InvalidArgumentError.code]: 400,
  [InvalidInputError.code]: 400,
})

/** Seconds a 503 asks the caller to wait before trying again (its Retry-After). */
export const RETRY_AFTER_S = 1

/**
 * How to answer an error a zeromesh call rejected with: `{ status, retryAfter, body }`, where
 * `retryAfter` is seconds (a 503) or null, and `body` is `{ error, code }` (the message, or
 * 'internal error' for a 500, which may hold a handler's details; `issues` too for a contract's
 * refused input).
 */
export function httpAnswerOf (err) {
  const code = typeof err?.code === 'string' ? err.code : null
  let status = code !== null && Object.hasOwn(httpStatusOfCode, code) ? httpStatusOfCode[code] : 500 // own keys only: a code such as 'constructor' is no status
  if (code === ConnectionLostError.code && err.retryable === true) status = 503 // an idempotent request with no retry left: safe to send again
  const body = { error: status === 500 ? 'internal error' : String(err?.message ?? ''), code }
  if (status === 400 && Array.isArray(err?.issues)) body.issues = err.issues
  return { status, retryAfter: status === 503 ? RETRY_AFTER_S : null, body }
}
