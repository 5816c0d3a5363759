// The work a started peer takes, made and wired once its socket is bound (core.js startNow):
// the admission (the one door, admission.js), the dispatcher that runs admitted work
// (dispatch.js), the duplicates memory, the three kinds of work (requests.js, events.js,
// streams.js) and the one intake they all enter by (intake.js). Each part is given the few
// things it uses; the peer keeps what this returns.
import { Admission } from './admission.js'
import { Dispatcher } from './dispatch.js'
import { RecentRequests } from './recent-requests.js'
import { PeerRequests } from './requests.js'
import { PeerStreams } from './streams.js'
import { PeerEvents } from './events.js'
import { Intake } from './intake.js'

/**
 * @param {object} o
 * @param {object} o.options  the peer's resolved options (limits, clock, maxQueue, maxQueueMs)
 * @param {string} o.endpoint  where it is bound
 * @param {import('./service.js').OwnService} o.own  what it serves and subscribes to
 * @param {Function[]} o.middleware  the peer's, read at each run
 * @param {import('./worker-pool.js').WorkerPool|null} o.pool  its handler threads, or null
 * @param {{ publish: Function, broadcast: Function }} o.publisher  how handlers publish events
 * @param {import('./connections.js').ConnectionTable} o.connections
 * @param {import('./flows.js').Flows} o.flows
 * @param {import('./reply-outbox.js').ReplyOutbox} o.replies
 * @param {object} o.counts  the peer's counters (duplicates)
 * @param {() => object|null} o.latency  the arrival-to-reply histogram, once metrics are on
 * @param {Function|null} o.debug  told of every request's answer, at --log-level debug only
 * @param {() => string} o.pressedMessage  why a peer near its memory limit refuses work
 * @param {(clientId: Buffer, frames: Buffer[], done?: Function) => void} o.send  the listener's send
 * @param {(conn, now: number) => void} o.asked  a connection asked for work (security.js)
 * @returns {{ admission: Admission, dispatcher: Dispatcher, recent: RecentRequests, requests: PeerRequests, streams: PeerStreams, events: PeerEvents, intake: Intake }}
 */
export function buildWork (o) {
  const { options, endpoint, own, pool, replies } = o
  const clock = options.clock
  const admission = new Admission({
    limits: options,
    places: pool === null ? undefined : () => pool.places(options.maxQueue, options.maxQueueMs),
    pressedMessage: o.pressedMessage,
  })
  const dispatcher = new Dispatcher({ middleware: o.middleware, admission, clock, endpoint, publisher: o.publisher })
  const recent = new RecentRequests({ clock, connections: o.connections })
  const requests = new PeerRequests({ dispatcher, service: own, replies, counts: o.counts, latency: o.latency, clock, debug: o.debug })
  const streams = new PeerStreams({ dispatcher, service: own, clock, send: o.send, limits: options })
  const events = new PeerEvents({ subscriptions: own.subscriptions, dispatcher, replies })
  const intake = new Intake({ recent, replies, flows: o.flows, admission, clock, asked: o.asked })
  return { admission, dispatcher, recent, requests, streams, events, intake }
}
