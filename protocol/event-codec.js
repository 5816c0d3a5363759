// EVENT (PROTOCOL.md 4.11): a client's events for a peer, one or more in a frame (coalesced as
// requests are). Each entry is `[id, event, payload, timeoutMs, group, ack, trace?, headers?]`:
// `group` names the subscribing group whose handler runs it (nil: every subscription to the
// event on that peer, a broadcast), `ack` whether the peer answers with a REPLY entry once its
// handlers finished (false: no answer, nothing remembered).
import { MessageType, Limits } from './constants.js'
import { checkList, checkValue, isUint, fail, traceCarrier } from './validate.js'
import { readHeaders, NO_HEADERS } from './headers.js'
import { isName } from './events.js'
import { frame } from './msgpack.js'
import { entriesFrame } from './frames.js'

/** An EVENT frame of `entries` ([id, event, payload, timeoutMs, group|null, ack, trace?, headers?]). */
export function encodeEvent (entries) {
  return frame(MessageType.EVENT, entries)
}

/** An EVENT frame from entries packed with packEntry (protocol/frames.js): the same bytes as encodeEvent. */
export function eventFrame (packed) {
  return entriesFrame(MessageType.EVENT, packed)
}

/**
 * The body of an EVENT frame, checked: { events, invalid }. An entry whose id is not a uint,
 * or whose `ack` is not a boolean, makes the frame malformed (an answer could not be
 * addressed, or its sender would not read it); an entry with a bad event, group, timeoutMs,
 * payload or headers is `invalid` (answered INVALID_REQUEST when it asks for an ack). A bad
 * `trace` is ignored, as in a REQUEST.
 */
export function decodeEvent (body, version, limits) {
  const maxDepth = limits.maxDepth ?? Limits.maxDepth
  checkList(body, 'event list', limits.maxBatch ?? Limits.maxBatch)
  const events = []
  const invalid = []
  for (let i = 0; i < body.length; i++) {
    const e = body[i]
    if (!Array.isArray(e) || e.length < 6) throw fail('an event entry must be [id, event, payload, timeoutMs, group, ack]')
    const id = e[0]; const event = e[1]; const timeoutMs = e[3]; const group = e[4]; const ack = e[5]
    if (!isUint(id)) throw fail('an event id must be an integer from 0 to 2^53-1')
    if (typeof ack !== 'boolean') throw fail('an event\'s ack must be true or false')
    let reason = null
    if (!isName(event)) reason = `event must be a string of 1 to ${Limits.maxEventLength} characters`
    else if (group !== null && group !== undefined && !isName(group)) reason = `group must be nil or a string of 1 to ${Limits.maxEventLength} characters`
    else if (!isUint(timeoutMs)) reason = 'timeoutMs must be a non-negative integer'
    else reason = checkValue(e[2], maxDepth)
    let headers = NO_HEADERS
    if (reason === null && e.length > 7) {
      const h = readHeaders(e[7])
      if (h.reason !== undefined) reason = h.reason
      else headers = h.headers
    }
    if (reason === null) events.push({ id, event, payload: e[2], timeoutMs, group: group ?? null, ack, trace: e.length > 6 ? traceCarrier(e[6]) : null, headers })
    else invalid.push({ id, ack, reason })
  }
  return { type: MessageType.EVENT, version, events, invalid }
}
