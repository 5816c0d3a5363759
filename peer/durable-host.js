// What a peer hands its durable log (the `durable` option, runtime/durable-hook.js): its
// subscriptions to durable events, how many more events it can take now, and a way to run one
// through the same admission and the same dispatch as every request and mesh event (ctx,
// span, middleware, worker threads). Durable events count as one flow of the peer's own
// (flows.js): when the peer is full they get their share of its places, as a client
// connection does.
import { Status } from '../protocol/constants.js'
import { UnknownMethodError, DrainingError, BusyError, TimeoutError, RemoteError } from '../protocol/errors.js'
import { EVENT_ID_HEADER, DELIVERIES_HEADER } from '../runtime/durable-hook.js'

/**
 * @param {object} o
 * @param {import('./subscriptions.js').Subscriptions} o.subscriptions
 * @param {import('./admission.js').Admission} o.admission
 * @param {import('./dispatch.js').Dispatcher} o.dispatcher
 * @param {{ now(): number }} o.clock
 * @param {(event: string) => boolean} o.owns  whether an event is durable
 */
const OK = Object.freeze({ ok: true })

export function durableHost ({ subscriptions, admission, dispatcher, clock, owns }) {
  const flow = { held: 0 } // every durable delivery, one flow (admission.js shares a full peer among flows)
  const tally = { ok: 0, errors: 0 }
  let next = 0
  const host = {
    /** Durable deliveries run (or refused) so far: activity, for the idle collector (idle-collect.js). */
    runs: 0,
    /** The peer's subscriptions to durable events: [{ event, group }]. */
    subscriptions: () => subscriptions.pairs().filter(([event]) => owns(event)).map(([event, group]) => ({ event, group })),
    /** Places free now for work of any kind (maxInflight, or what the threads' queue allows, less what is held). */
    free: () => admission.draining ? 0 : Math.max(0, admission.places(null) - admission.inflight),
    get draining () { return admission.draining },
    /**
     * Runs `event`'s handler in `group` with `payload`, then calls `done` once with { ok: true },
     * or { ok: false, refused, code, message } (refused: the peer did not run it, busy or
     * draining): at once when the handler returned at once, so the log's ack leaves in the same
     * write as what the handler did. Without `done`, a promise of the same.
     */
    run (event, group, payload, { id, deliveries, headers, timeoutMs, bytes }, done) {
      if (done === undefined) return new Promise((resolve) => host.run(event, group, payload, { id, deliveries, headers, timeoutMs, bytes }, resolve))
      host.runs++
      const handler = subscriptions.handler(event, group)
      if (handler === undefined) return done({ ok: false, refused: true, code: UnknownMethodError.code, message: `no subscription to "${event}" in group "${group}" here` })
      const fn = admission.take(handler, bytes, null, flow)
      if (typeof fn !== 'function') return done({ ok: false, refused: true, code: fn.status === Status.DRAINING ? DrainingError.code : BusyError.code, message: fn.message })
      const req = { id: ++next, method: event, args: payload, timeoutMs, trace: null, headers: { ...headers, [EVENT_ID_HEADER]: id, [DELIVERIES_HEADER]: String(deliveries) }, group }
      dispatcher.execute(req, fn, (entry) => {
        if (entry === null) return done({ ok: false, refused: false, code: TimeoutError.code, message: `the handler ran past its ${timeoutMs} ms` })
        if (entry[1] === Status.OK) return done(OK)
        const [message, code] = Array.isArray(entry[2]) ? entry[2] : [String(entry[2]), null]
        done({ ok: false, refused: entry[1] === Status.DRAINING, code: code ?? RemoteError.code, message })
      }, null, clock.now(), bytes, tally, 'event', flow)
    },
  }
  return host
}
