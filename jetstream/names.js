// The names zeromesh gives things in JetStream, as pure functions (test/unit/jetstream-names.test.js):
// the subject an event is stored under, and the durable consumer a group reads it through.
//
// Subject: `<subjects>.<event>`, `subjects` the stream's prefix ('zeromesh.events' by default).
// A durable event's name must be a valid run of NATS subject tokens: tokens separated by '.',
// none empty, no whitespace or control characters, no '*' or '>' (wildcards). zeromesh's own
// event names (1 to 256 characters of anything) are wider, so the list of durable events is
// checked when it is given.
//
// Consumer: a group reads each event it subscribes to through one durable consumer, named
//   zm-<group>-<event>
// where each name is written with its letters and digits kept and every other character as
// '_' and its UTF-8 bytes in two lowercase hex digits each ('.' -> _2e, '@' -> _40, '-' -> _2d,
// '_' -> _5f). That gives a valid durable name (letters, digits, '-' and '_' only) for any group
// zeromesh allows, dots, '@' and the default group (the event's own name) included, and two
// different (group, event) pairs never share one. A name longer than 200 characters (a store
// keeps a consumer in a directory of that name) is cut to its first 150 and the first 32 hex
// digits of the SHA-256 of group, a zero byte and event.
import { createHash } from 'node:crypto'

const MAX_NAME = 200

/** Why `event` cannot be a durable event's name (a NATS subject's tail), or null. */
export function subjectProblem (event) {
  if (typeof event !== 'string' || event.length === 0 || event.length > 256) return 'must be a string of 1 to 256 characters'
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f*>]/.test(event)) return 'has whitespace, a control character, "*" or ">" (not allowed in a NATS subject)'
  if (event.split('.').some((t) => t.length === 0)) return 'has an empty token (a leading, trailing or doubled ".")'
  return null
}

/** The subject `event` is stored under, in a stream whose subjects are `<prefix>.>`. */
export function subjectOf (prefix, event) {
  return `${prefix}.${event}`
}

/** `name` written in letters, digits and `_hh` escapes: injective, and valid in a durable name. */
export function escapeName (name) {
  let out = ''
  for (const ch of name) {
    if (/^[A-Za-z0-9]$/.test(ch)) out += ch
    else for (const b of Buffer.from(ch, 'utf8')) out += `_${b.toString(16).padStart(2, '0')}`
  }
  return out
}

/** The durable consumer `group` reads `event` through (the rule above). */
export function consumerName (group, event) {
  const name = `zm-${escapeName(group)}-${escapeName(event)}`
  if (name.length <= MAX_NAME) return name
  return `${name.slice(0, 150)}-${createHash('sha256').update(group).update('\0').update(event).digest('hex').slice(0, 32)}`
}
