// Calling code the user gave zeromesh (a strategy, an event listener, a logger) so that what it
// throws never reaches the request path: the call at hand settles, and the error surfaces as an
// 'error' event when someone listens, a log line otherwise, and a process warning (once per
// kind) when the logger is silent too.
import { UserCodeError } from '../protocol/errors.js'
import { SILENT_LOGGER } from './options.js'

const warned = new Set() // kinds already warned about in this process

/** `err`, thrown by the user's `what`, as a UserCodeError (its cause), surfaced by `owner`. */
export function userFault (owner, logger, what, err) {
  const fault = new UserCodeError(`zeromesh: ${what} threw: ${err?.message ?? String(err)}`, { cause: err })
  if (owner.listenerCount('error') > 0) {
    try { owner.emit('error', fault) } catch { /* an 'error' listener that throws: nothing more to tell */ }
    return fault
  }
  if (logger !== SILENT_LOGGER) {
    try { logger.error({ err: fault.message, where: what }, fault.message); return fault } catch { /* the logger itself: warn below */ }
  }
  if (!warned.has(what)) {
    warned.add(what)
    process.emitWarning(`${fault.message} (add an 'error' listener or a logger to see each one)`, { code: UserCodeError.code })
  }
  return fault
}

/** Emits `event` to the user's listeners; a listener that throws is reported, not thrown. */
export function safeEmit (owner, logger, event, payload) {
  try {
    owner.emit(event, payload)
  } catch (err) {
    userFault(owner, logger, `a '${event}' listener`, err)
  }
}

/**
 * A logger that never throws: each call goes to `logger`, and a throw from it is reported
 * through `report(level, err)` (which must not log through it again).
 */
export function safeLogger (logger, report) {
  if (logger === SILENT_LOGGER) return logger
  const out = {}
  if (typeof logger.isLevelEnabled === 'function') out.isLevelEnabled = (level) => { try { return logger.isLevelEnabled(level) } catch { return true } }
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) {
    const fn = typeof logger[level] === 'function' ? logger[level] : logger.error
    out[level] = (fields, message) => {
      try { fn.call(logger, fields, message) } catch (err) { report(level, err) }
    }
  }
  return Object.freeze(out)
}
