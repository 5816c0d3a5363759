// zeromesh errors as HTTP answers. Match on `err.code`, never on the message.
//   busy, draining, no peer, closed -> 503 with Retry-After: the work did not run; try again soon
//   timeout                         -> 504: no answer in time (it may have run)
//   invalid input, invalid argument -> 400: the caller's input (with the contract's issues)
//   anything else                   -> 500 (a handler's own code stays in err.remoteCode)

const STATUS = {
  ERR_ZEROMESH_BUSY: 503,
  ERR_ZEROMESH_DRAINING: 503,
  ERR_ZEROMESH_NO_PEERS: 503,
  ERR_ZEROMESH_CLOSED: 503,
  ERR_ZEROMESH_TIMEOUT: 504,
  ERR_ZEROMESH_INVALID_ARGUMENT: 400,
  ERR_ZEROMESH_INVALID_INPUT: 400,
}

/** { status, retryAfter } for an error a zeromesh call rejected with; retryAfter in seconds, or null. */
export function httpAnswerOf (err) {
  const status = STATUS[err?.code] ?? 500
  return { status, retryAfter: status === 503 ? 1 : null }
}

/** An Express error handler (last in the chain) that answers zeromesh errors with their status. */
export function zeromeshErrors (err, req, res, next) {
  if (res.headersSent) return next(err)
  const { status, retryAfter } = httpAnswerOf(err)
  if (retryAfter !== null) res.set('Retry-After', String(retryAfter))
  res.status(status).json({ error: status === 500 ? 'internal error' : err.message, code: err.code ?? null, ...(Array.isArray(err.issues) && status === 400 ? { issues: err.issues } : {}) })
}
