// Node's diagnostics_channel TracingChannels for every call (docs/guides/observing.md), so
// APM agents other than OpenTelemetry's (Datadog, Elastic, Sentry) and your own code see each
// call without the OTel SDK:
//   zeromesh:client:request, zeromesh:client:stream, zeromesh:client:event (a publish's or a
//   broadcast's deliveries, one each), zeromesh:peer:request, zeromesh:peer:stream,
//   zeromesh:peer:event.
// Each call's one message object goes through `start` and `end` (the call begun), then
// `error` when it failed and `asyncStart` and `asyncEnd` when it settled. It carries the
// method (an event's name), the kind, the peer's endpoint, the attempts (a client's), and the
// outcome: `code` (null for a success, else the error's code) and `error`; never arguments,
// payloads or results. Published only while something subscribes: a call pays one check.
// Channels are per thread: for a handler in a worker thread, the peer's main thread publishes
// zeromesh:peer:* around its hand-off and its answer; the thread publishes nothing.
import diagnosticsChannel from 'node:diagnostics_channel'
import { Status } from '../protocol/constants.js'
import { RemoteError, BusyError, DrainingError, UnknownMethodError, InvalidArgumentError } from '../protocol/errors.js'

/** The code a client's error has for each refusal a peer answers (client/calls.js). */
const CODE_OF_STATUS = {
  [Status.REMOTE]: RemoteError.code,
  [Status.BUSY]: BusyError.code,
  [Status.DRAINING]: DrainingError.code,
  [Status.UNKNOWN_METHOD]: UnknownMethodError.code,
  [Status.INVALID_REQUEST]: InvalidArgumentError.code,
}

export const channels = Object.freeze({
  clientRequest: diagnosticsChannel.tracingChannel('zeromesh:client:request'),
  clientStream: diagnosticsChannel.tracingChannel('zeromesh:client:stream'),
  clientEvent: diagnosticsChannel.tracingChannel('zeromesh:client:event'),
  peerRequest: diagnosticsChannel.tracingChannel('zeromesh:peer:request'),
  peerStream: diagnosticsChannel.tracingChannel('zeromesh:peer:stream'),
  peerEvent: diagnosticsChannel.tracingChannel('zeromesh:peer:event'),
})

/**
 * A call's message on `channel`, published as begun (start, end); null when nothing subscribes
 * (then nothing is made). `attempts`: a client's (its message counts them), or undefined for a peer's.
 */
export function begun (channel, method, kind, group, endpoint, attempts) {
  if (!channel.hasSubscribers) return null
  const message = attempts === undefined ? { method, kind, group, endpoint } : { method, kind, group, endpoint, attempts }
  channel.start.publish(message)
  channel.end.publish(message)
  return message
}

/** `message` (begun()'s) settled: failed with `err` (then error), or not; asyncStart and asyncEnd. */
export function settled (channel, message, err) {
  if (err === null || err === undefined) {
    message.code = null
  } else {
    message.code = typeof err.code === 'string' ? err.code : null
    message.error = err
    channel.error.publish(message)
  }
  channel.asyncStart.publish(message)
  channel.asyncEnd.publish(message)
}

/**
 * `message` (begun()'s) of work a peer ran, settled by the answer it gave: `status` and
 * `value` as a REPLY entry or a STREAM_END carries them (an error's [message, code]); `items`,
 * a stream's count. The error published is a plain Error with the code the caller gets.
 */
export function answered (channel, message, status, value, items) {
  if (items !== undefined) message.items = items
  if (status === Status.OK) return settled(channel, message, null)
  const code = typeof value?.[1] === 'string' ? value[1] : (CODE_OF_STATUS[status] ?? RemoteError.code)
  settled(channel, message, Object.assign(new Error(typeof value?.[0] === 'string' ? value[0] : code), { code }))
}
