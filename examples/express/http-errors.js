// zeromesh errors as HTTP answers, in an Express error handler (last in the chain). The mapping
// itself is zeromesh/http's httpAnswerOf(), the one zeromesh/nest's filter uses too:
//   busy, draining, no peer, no subscriber, closed -> 503 with Retry-After: the work did not run
//   timeout                                        -> 504: no answer in time (it may have run)
//   invalid input, invalid argument                -> 400: the caller's input (with the contract's issues)
//   anything else                                  -> 500 (a handler's own code stays in err.remoteCode)
import { httpAnswerOf } from 'zeromesh/http'

export function zeromeshErrors (err, req, res, next) {
  if (res.headersSent) return next(err)
  const { status, retryAfter, body } = httpAnswerOf(err)
  if (retryAfter !== null) res.set('Retry-After', String(retryAfter))
  res.status(status).json(body)
}
