// Prometheus metrics of a Peer or a Client, in a prom-client registry (the caller's, or a new
// one). Everything is read from the peer's or client's counters when the registry is scraped,
// so the request path pays only for the latency histogram, and only once metrics are on.
import promClient from 'prom-client'
import { LatencyHistogram } from './histogram.js'
import { observeLatency, methodCounts, maxInflightOf } from '../peer/peer.js'
import { observeLatency as observeClientLatency } from '../client/client.js'
import {
  TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError, DrainingError, ClosedError,
  InvalidArgumentError, ConnectionLostError, AbortError, HandshakeError, NoSubscribersError,
} from '../protocol/errors.js'

/** Registers a metric whose values `read()` gives at each scrape. */
function gauge (registry, name, help, type, read) {
  registry.registerMetric({ name, help, type, get: async () => ({ name, help, type, values: read() }) })
}

const byLabel = (label, record, known = []) => {
  const all = { ...Object.fromEntries(known.map((k) => [k, 0])), ...record } // every known value, at 0 before its first event
  return Object.entries(all).map(([k, value]) => ({ labels: { [label]: k }, value }))
}

// The values a labelled series can take that are known in advance, so a fresh peer exports
// each at 0 (dashboards and alerts see a series before its first event).
const DROP_REASONS = ['client-gone', 'client-not-reading', 'closed', 'handler-error']
// How a stream ended (streams_total's outcome) and the peer's counter of each (peer/streams.js).
const STREAM_OUTCOMES = [['ok', 'ended'], ['failed', 'failed'], ['cancelled', 'cancelled'], ['refused', 'refused'], ['drained', 'drained'], ['cut', 'cut'], ['expired', 'expired'], ['silent', 'silent'], ['undeliverable', 'undeliverable']]
// The codes a client's request may fail with (failed_total's code).
const FAILURE_CODES = [TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError, DrainingError, ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, HandshakeError, NoSubscribersError].map((e) => e.code)
const REFUSAL_REASONS = ['key not allowed', 'not CURVE', 'wrong cluster key', 'handshake rate', 'too many connections', 'too many connections from this address']

/**
 * Metrics of `peer`: requests and replies by outcome, latency, in flight, threads and their
 * queue, members by state, gossip traffic, refused handshakes and dropped replies. Returns
 * the registry.
 * @param {import('../peer/peer.js').Peer} peer
 * @param {{ registry?: import('prom-client').Registry, prefix?: string }} [o]
 */
export function peerMetrics (peer, { registry = new promClient.Registry(), prefix = 'zeromesh_peer_' } = {}) {
  const latency = new LatencyHistogram()
  observeLatency(peer, latency) // the peer observes each request's time from arrival to reply
  const s = () => peer.stats()
  const n = (x) => `${prefix}${x}`
  gauge(registry, n('requests_total'), 'Requests received (entries of REQUEST frames).', 'counter', () => [{ value: s().requests ?? 0 }])
  gauge(registry, n('replies_total'), 'Requests answered, by outcome.', 'counter', () => {
    const x = s()
    return [['ok', x.ok], ['remote_error', x.errors], ['unknown_method', x.unknown], ['busy', x.busy], ['draining', x.drained], ['invalid', x.invalid], ['cancelled', x.cancelled]]
      .map(([outcome, value]) => ({ labels: { outcome }, value: value ?? 0 }))
  })
  registry.registerMetric({
    name: n('request_duration_seconds'), help: 'Time from a request\'s arrival to its reply.', type: 'histogram',
    get: async () => ({ name: n('request_duration_seconds'), help: 'Time from a request\'s arrival to its reply.', type: 'histogram', values: latency.values(n('request_duration_seconds')) }),
  })
  // By method, for the methods this peer serves or served: a caller cannot add a label value.
  const byMethod = (field) => byLabel('method', Object.fromEntries([...methodCounts(peer)].map(([m, c]) => [m, c[field]])), peer.service().methods)
  gauge(registry, n('method_requests_total'), 'Requests for each method this peer serves (busy and draining answers included).', 'counter', () => byMethod('requests'))
  gauge(registry, n('method_errors_total'), 'Handler errors for each method this peer serves.', 'counter', () => byMethod('errors'))
  gauge(registry, n('handlers_overran_total'), 'Handlers that settled more than 100 ms after their signal aborted (the caller cancelled, the deadline passed, the drain cut it), holding a place until then.', 'counter', () => [{ value: s().overran ?? 0 }])
  gauge(registry, n('inflight'), 'Requests running now (async handlers and threads).', 'gauge', () => [{ value: s().inflight }])
  gauge(registry, n('queue_depth'), 'Requests waiting for a worker thread.', 'gauge', () => [{ value: s().threads?.queued ?? 0 }])
  gauge(registry, n('threads'), 'Worker threads running handlers (0: the main thread).', 'gauge', () => [{ value: s().threads?.size ?? 0 }])
  gauge(registry, n('thread_crashes_total'), 'Handler threads that crashed or exited (each replaced; the request it ran failed with ERR_ZEROMESH_WORKER_EXIT).', 'counter', () => [{ value: s().threads?.crashed ?? 0 }])
  // What an autoscaler scales on (deploy/kubernetes/hpa.yaml): the work held over what the peer
  // runs at once, its declared capacity, else its threads, else maxInflight. Above 1, requests
  // wait in its queue; the peer answers BUSY when its inflight reaches maxInflight.
  gauge(registry, n('saturation'), 'Requests running or queued over what this peer runs at once (its capacity, else its threads, else maxInflight).', 'gauge', () => {
    const x = s()
    const capacity = peer.service().capacity ?? (x.threads?.size || maxInflightOf(peer))
    return [{ value: x.inflight / capacity }]
  })
  gauge(registry, n('members'), 'Members of the cluster by state, as this peer sees it (itself included).', 'gauge', () => {
    const counts = { alive: 0, suspect: 0, dead: 0, left: 0 }
    for (const m of peer.members()) counts[m.state]++
    return byLabel('state', counts)
  })
  gauge(registry, n('gossip_messages_sent_total'), 'Membership requests sent.', 'counter', () => [{ value: s().membership.gossipSent ?? 0 }])
  gauge(registry, n('gossip_bytes_sent_total'), 'Bytes of membership requests sent.', 'counter', () => [{ value: s().membership.gossipBytes ?? 0 }])
  // The gossip's health (docs/guides/observing.md, "Membership"): what a healthy fleet shows is
  // an empty queue at rest, round trips far below the probe timeout, a local health of 0.
  gauge(registry, n('gossip_queue_depth'), 'Membership changes waiting to be gossiped (0 at rest; grows with churn).', 'gauge', () => [{ value: s().membership.queueDepth ?? 0 }])
  gauge(registry, n('gossip_probe_rtt_ms'), 'Round trips of answered direct probes, over the last 256.', 'gauge', () => {
    const r = s().membership.probeRttMs ?? {}
    return [{ labels: { quantile: '0.5' }, value: r.p50 ?? 0 }, { labels: { quantile: '0.99' }, value: r.p99 ?? 0 }]
  })
  gauge(registry, n('gossip_local_health'), 'Lifeguard local health: 0 healthy, up to awarenessMax when this peer\'s own probing looks unreliable (its timeouts are scaled by it + 1).', 'gauge', () => [{ value: s().membership.localHealth ?? 0 }])
  gauge(registry, n('gossip_connections'), 'Membership connections this peer holds (its subjects and recent others; at most maxConnections).', 'gauge', () => [{ value: s().membership.connections ?? 0 }])
  gauge(registry, n('gossip_connections_opened_total'), 'Membership connections opened (each a handshake).', 'counter', () => [{ value: s().membership.connectionsOpened ?? 0 }])
  gauge(registry, n('gossip_suspicions_total'), 'Members this peer came to suspect (on its own probes or others\' word).', 'counter', () => [{ value: s().membership.suspected ?? 0 }])
  gauge(registry, n('gossip_refutations_total'), 'Suspicions of this peer it refuted.', 'counter', () => [{ value: s().membership.refuted ?? 0 }])
  gauge(registry, n('gossip_deaths_total'), 'Members this peer declared dead (its suspicion ran out).', 'counter', () => [{ value: s().membership.died ?? 0 }])
  gauge(registry, n('handshake_refusals_total'), 'Handshakes refused (secured peers), by reason.', 'counter', () => byLabel('reason', s().security.refused, REFUSAL_REASONS))
  gauge(registry, n('dropped_total'), 'Replies and messages dropped, by reason.', 'counter', () => byLabel('reason', s().drops, DROP_REASONS))
  gauge(registry, n('malformed_total'), 'Frames that broke the wire format, or membership requests unsealed in a secured cluster.', 'counter', () => [{ value: s().malformed }])
  gauge(registry, n('ready'), '1 when the peer has joined and serves; 0 from the moment it drains.', 'gauge', () => [{ value: peer.ready ? 1 : 0 }])
  gauge(registry, n('streams_open'), 'Streams open now.', 'gauge', () => [{ value: s().streams?.open ?? 0 }])
  gauge(registry, n('streams_total'), 'Streams over, by how they ended.', 'counter', () => {
    const c = s().streams ?? {}
    return STREAM_OUTCOMES.map(([outcome, field]) => ({ labels: { outcome }, value: c[field] ?? 0 }))
  })
  gauge(registry, n('stream_item_frames_total'), 'Item frames sent on streams.', 'counter', () => [{ value: s().streams?.items ?? 0 }])
  gauge(registry, n('stream_held_bytes'), 'Bytes of stream item frames waiting to leave (capped at half of maxInflightBytes).', 'gauge', () => [{ value: s().streams?.held ?? 0 }])
  // By event, for the events this peer subscribes to only: a publisher cannot add a label value.
  // Each event it subscribes to at 0 before its first delivery, as other labelled series.
  gauge(registry, n('events_total'), 'Events received, handled and failed, by event (the events this peer subscribes to).', 'counter', () => {
    const byEvent = s().events?.byEvent ?? {}
    const events = new Set([...peer.service().events.map((e) => e.event), ...Object.keys(byEvent)])
    const out = []
    for (const event of events) for (const outcome of ['received', 'handled', 'failed']) out.push({ labels: { event, outcome }, value: byEvent[event]?.[outcome] ?? 0 })
    return out
  })
  gauge(registry, n('memory_actions_total'), 'What the memory limit did: full collections past 60% of it, every connection closed past 80%.', 'counter', () => [{ labels: { action: 'collect' }, value: s().memory.collections }, { labels: { action: 'close_connections' }, value: s().memory.sheds }])
  return registry
}

/**
 * Metrics of `client`: requests and failures by code, latency, in flight, retries, hedges,
 * ejections, and peers by state. For embedders: pass the registry of your own service.
 * @param {import('../client/client.js').Client} client
 * @param {{ registry?: import('prom-client').Registry, prefix?: string }} [o]
 */
export function clientMetrics (client, { registry = new promClient.Registry(), prefix = 'zeromesh_client_' } = {}) {
  const latency = new LatencyHistogram()
  observeClientLatency(client, latency) // the client observes each request's whole time, retries included
  const s = () => client.stats()
  const n = (x) => `${prefix}${x}`
  gauge(registry, n('requests_total'), 'Requests made.', 'counter', () => [{ value: s().requests }])
  gauge(registry, n('succeeded_total'), 'Requests that got a result.', 'counter', () => [{ value: s().ok }])
  gauge(registry, n('failed_total'), 'Requests that failed, by error code.', 'counter', () => byLabel('code', s().failed, FAILURE_CODES))
  registry.registerMetric({
    name: n('request_duration_seconds'), help: 'Whole time of a request, retries included.', type: 'histogram',
    get: async () => ({ name: n('request_duration_seconds'), help: 'Whole time of a request, retries included.', type: 'histogram', values: latency.values(n('request_duration_seconds')) }),
  })
  gauge(registry, n('inflight'), 'Requests waiting for an answer.', 'gauge', () => [{ value: s().inflight }])
  gauge(registry, n('retries_total'), 'Attempts after the first.', 'counter', () => [{ value: s().retries }])
  gauge(registry, n('hedges_total'), 'Hedged copies sent.', 'counter', () => [{ value: s().hedges }])
  gauge(registry, n('ejections_total'), 'Peers taken out of rotation after failures in a row.', 'counter', () => [{ value: s().ejections }])
  gauge(registry, n('peers'), 'Peers known, by state.', 'gauge', () => {
    const counts = { up: 0, down: 0, draining: 0, ejected: 0 }
    for (const p of client.peers()) counts[p.state] = (counts[p.state] ?? 0) + 1
    return byLabel('state', counts)
  })
  return registry
}
