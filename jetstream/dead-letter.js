// The dead letters: an event a group gave up on (maxDeliver attempts failed, its payload does
// not decode, the peer of its last attempt was lost) is stored in the dead-letter stream under
// <subjects>-dead.<event>, its bytes as they were, with what went wrong in its headers
// (Zeromesh-Error-Code, -Error-Message, -Attempts, -Group, -Stream, -Seq: codec.js), then
// terminated in its stream (JetStream delivers it no more to that group), and the onDeadLetter
// hook is told. Its message id is the group's and the event's, so a dead letter stored twice
// (a peer lost between the two steps) is kept once.
import { Header } from './codec.js'
import { escapeName } from './names.js'

const MAX_MESSAGE = 1024

/** A header value: one line, at most `max` characters. */
function line (s, max = MAX_MESSAGE) {
  return String(s).replace(/[\r\n]+/g, ' ').slice(0, max)
}

/**
 * Stores `m` (a JsMsg of `event`, read by `group`) as a dead letter with `error` ({ code,
 * message }) after `attempts`. Resolves with the dead letter's { stream, seq }, or throws
 * when JetStream did not store it (the caller gives the event back, to be tried again).
 */
export async function deadLetter ({ connection, options, event, group, id, m, error, attempts }) {
  const h = connection.nats.headers()
  h.set(Header.EVENT, line(event))
  h.set(Header.GROUP, line(group))
  h.set(Header.ERROR_CODE, line(error.code ?? 'ERR_ZEROMESH_REMOTE', 256))
  h.set(Header.ERROR_MESSAGE, line(error.message ?? ''))
  h.set(Header.ATTEMPTS, String(attempts))
  h.set(Header.STREAM, m.info.stream)
  h.set(Header.SEQ, String(m.info.streamSequence))
  const carried = m.headers?.get(Header.HEADERS) ?? ''
  if (carried !== '') h.set(Header.HEADERS, carried)
  const ack = await connection.js.publish(`${options.deadSubjects}.${event}`, m.data, { msgID: `${escapeName(group)}:${line(id, 256)}`, headers: h, expect: { streamName: options.deadLetterStream } })
  m.term()
  return { stream: ack.stream, seq: ack.seq }
}
