// The `durable` option of a Peer and a Client: an object that takes some event names off the
// mesh and onto a durable log (zeromesh/jetstream makes one; docs/reference/durable.md). Peer
// and Client know only this interface, never NATS: the log's code lives in its own entry and
// loads only when the user makes one.
//
//   owns(event) -> boolean            whether `event` is durable (the same list on every side)
//   publish(event, payload, options)  a Client's publish of a durable event: a promise of what the log stored
//   attach(host) -> Promise           a Peer, once running, hands over its durable subscriptions (peer/durable-host.js)
//   drain(timeoutMs) -> Promise       the Peer stops: take nothing new, finish or give back what it holds
import { invalidArgument } from '../protocol/errors.js'

const PARTS = ['owns', 'publish', 'attach', 'drain']

/** The header a durable delivery's ctx carries its event id in (ctx.eventId)... */
export const EVENT_ID_HEADER = 'zeromesh-event-id'
/** ...and how many times the log delivered it, this time included (ctx.deliveries). */
export const DELIVERIES_HEADER = 'zeromesh-deliveries'

/** The `durable` option checked: null when not given. */
export function durableOption (v, name) {
  if (v === undefined || v === null) return null
  if (typeof v !== 'object' || PARTS.some((k) => typeof v[k] !== 'function')) {
    throw invalidArgument(`${name} must be what zeromesh/jetstream's durableEvents() resolves with (an object with ${PARTS.join(', ')}), got ${v === null ? 'null' : typeof v}`)
  }
  return v
}
