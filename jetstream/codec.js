// What a durable event is in JetStream: its payload as MessagePack (zeromesh's settings:
// protocol/msgpack.js, so the Python peer and any NATS client read it), and its metadata as
// NATS headers:
//   Nats-Msg-Id       the event id (JetStream's duplicate detection: a retried publish is stored once)
//   (the event's name is the subject's tail; a dead letter also names it in Zeromesh-Event)
//   Zeromesh-Headers  the publisher's headers, as JSON (absent when none)
import { packr, unpackr } from '../protocol/msgpack.js'
import { readHeaders, NO_HEADERS } from '../protocol/headers.js'

export const Header = Object.freeze({
  ID: 'Nats-Msg-Id',
  EVENT: 'Zeromesh-Event',
  HEADERS: 'Zeromesh-Headers',
  ERROR_CODE: 'Zeromesh-Error-Code', //       a dead letter's: the last error's code
  ERROR_MESSAGE: 'Zeromesh-Error-Message', // ...its message (at most 1024 characters)
  ATTEMPTS: 'Zeromesh-Attempts', //           ...how many times it was delivered
  GROUP: 'Zeromesh-Group', //                 ...the group that gave up on it
  STREAM: 'Zeromesh-Stream', //               ...where it was stored
  SEQ: 'Zeromesh-Seq',
})

/**
 * The payload packed: msgpackr's result is a view of its slab, which a later pack() never
 * rewrites (protocol/msgpack.js), so the NATS client may hold it until it writes it.
 */
export function encodePayload (payload) {
  return packr.pack(payload)
}

/** { payload, headers } of a stored event, or { problem } when it does not decode. */
export function decodeEvent (data, natsHeaders) {
  let payload
  try {
    payload = data.length === 0 ? undefined : unpackr.unpack(data)
  } catch (err) {
    return { problem: `the payload is not MessagePack: ${err.message}` }
  }
  const json = natsHeaders?.get(Header.HEADERS) ?? ''
  if (json === '') return { payload, headers: NO_HEADERS }
  let h
  try {
    h = JSON.parse(json)
  } catch (err) {
    return { problem: `${Header.HEADERS} is not JSON: ${err.message}` }
  }
  const read = readHeaders(h)
  if (read.reason !== undefined) return { problem: `${Header.HEADERS}: ${read.reason}` }
  return { payload, headers: read.headers }
}
