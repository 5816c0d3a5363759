// Subscriptions as a peer states them (PROTOCOL.md 4.11): the ninth element of its SERVICE
// answer, `[[event, group], ...]` sorted by event and then group. The element is not in the
// descriptor's digest text, which older clients recompute: a peer with subscriptions states
// the label EVENTS_LABEL (the digest of this element), so a change of subscriptions changes
// the descriptor's digest and every client, older ones too, asks the peer again.
import { Limits } from './constants.js'
import { fnv1a } from './fnv.js'
import { byCodeUnits } from './code-units.js'

/** The label a peer with subscriptions states: the FNV-1a digest of its events element, 8 hex digits. */
export const EVENTS_LABEL = 'zeromesh/events'

/** A subscription's key in a descriptor's `subs` set. */
export function subscriptionKey (event, group) {
  return `${event}\0${group}`
}

/** The events element of `[event, group]` pairs: sorted by event, then group (code units); null when there are none. */
export function eventsElement (pairs) {
  if (pairs.length === 0) return null
  return [...pairs].map(([e, g]) => [e, g]).sort((a, b) => byCodeUnits(a[0], b[0]) || byCodeUnits(a[1], b[1]))
}

/** The EVENTS_LABEL value of an element: FNV-1a of `event\\0group\\n` for each pair in order, 8 hex digits. */
export function eventsDigest (element) {
  let text = ''
  for (const [e, g] of element) text += `${e}\0${g}\n`
  return fnv1a(text).toString(16).padStart(8, '0')
}

/** Why `v` is not a valid events element, or null. */
export function eventsProblem (v) {
  if (!Array.isArray(v)) return 'events must be an array of [event, group]'
  if (v.length > Limits.maxSubscriptions) return `${v.length} subscriptions, more than ${Limits.maxSubscriptions}`
  let prev = null
  for (const p of v) {
    if (!Array.isArray(p) || p.length !== 2 || !isName(p[0]) || !isName(p[1])) return `a subscription must be [event, group], each a string of 1 to ${Limits.maxEventLength} characters`
    if (prev !== null && (byCodeUnits(prev[0], p[0]) || byCodeUnits(prev[1], p[1])) >= 0) return 'subscriptions must be sorted by event, then group, each listed once'
    prev = p
  }
  return null
}

/** Whether `v` is an event or group name (1 to Limits.maxEventLength UTF-16 code units). */
export function isName (v) {
  return typeof v === 'string' && v.length > 0 && v.length <= Limits.maxEventLength
}
