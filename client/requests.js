// The request codec of the entry kind (entry-calls.js): a REQUEST entry (PROTOCOL.md 4.1), its
// caller's promise, and its errors. This client reads large binary results in bulk frames
// (4.2.1), and learns which methods' replies are large, so it does not coalesce those.
import { encodeRequest } from '../protocol/codec.js'
import { requestFrame } from '../protocol/frames.js'
import { Accepts } from '../protocol/constants.js'
import { TimeoutError, UnknownMethodError } from '../protocol/errors.js'
import { channels } from '../runtime/diagnostics.js'

/** What a request is, as the entry kind reads it: a new object per client (its counts). */
export function requestCodec () {
  return {
    noun: 'request',
    channel: channels.clientRequest,
    needs: 0, // every peer takes requests
    what: 'args',
    learnsSizes: true,
    counts: { started: 0, ok: 0, failed: 0 },
    entry: requestEntry,
    frame: encodeRequest,
    joined: requestFrame,
    adopt (call) {
      call.promise = new Promise((resolve, reject) => { call.resolve = resolve; call.reject = reject })
    },
    deliver (call, err, value) {
      if (err === null) call.resolve(value)
      else call.reject(err)
    },
    timedOut (call) {
      return new TimeoutError(`zeromesh: "${call.method}" got no reply within ${call.timeout} ms (${call.attempts} attempt${call.attempts === 1 ? '' : 's'})`)
    },
    unroutable (message) {
      return new UnknownMethodError(message)
    },
  }
}

const SEVERAL = Accepts.BULK | Accepts.VALUES

/**
 * A call's REQUEST entry (PROTOCOL.md 4.1): this client reads large binary results in bulk
 * frames (4.2.1), and several results (4.2.3) when the caller asked for them (`values`).
 */
function requestEntry (call, remaining) {
  const accepts = call.values ? SEVERAL : Accepts.BULK
  if (call.headers === null) return [call.id, call.method, call.args, remaining, call.trace, accepts]
  return [call.id, call.method, call.args, remaining, call.trace, accepts, call.headers]
}
