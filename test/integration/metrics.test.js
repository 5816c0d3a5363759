// Metrics for embedders: a client's and a peer's metrics in a prom-client registry of the
// caller's own, read at scrape time (real sockets on 127.0.0.1).
import { expect } from 'chai'
import { eventually } from '../helpers/eventually.js'
import promClient from 'prom-client'
import { peerMetrics, clientMetrics } from 'zeromesh/metrics'
import { harness } from '../helpers/cluster.js'

describe('metrics (zeromesh/metrics)', function () {
  this.timeout(10000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('client and peer metrics go to the registry given, beside the service\'s own, and move with traffic', async () => {
    const registry = new promClient.Registry()
    const mine = new promClient.Counter({ name: 'my_service_things_total', help: 'the service\'s own', registers: [registry] })
    mine.inc()
    const p = await h.peer({ handlers: { echo: (x) => x, fail: () => { throw Object.assign(new Error('no'), { code: 'E_NO' }) } } })
    const c = h.client({ seeds: p.endpoint })
    clientMetrics(c, { registry })
    peerMetrics(p, { registry })
    for (let i = 0; i < 5; i++) await c.request('echo', i)
    await c.request('fail').catch(() => {})
    const text = await registry.metrics()
    const value = (re) => Number(re.exec(text)?.[1])
    expect(value(/^my_service_things_total (\d+)$/m)).to.equal(1)
    expect(value(/^zeromesh_client_requests_total (\d+)$/m)).to.equal(6)
    expect(value(/^zeromesh_client_succeeded_total (\d+)$/m)).to.equal(5)
    expect(value(/^zeromesh_client_failed_total\{code="ERR_ZEROMESH_REMOTE"\} (\d+)$/m)).to.equal(1)
    expect(value(/^zeromesh_client_request_duration_seconds_count (\d+)$/m)).to.equal(6)
    expect(value(/^zeromesh_client_peers\{state="up"\} (\d+)$/m)).to.equal(1)
    expect(value(/^zeromesh_peer_replies_total\{outcome="remote_error"\} (\d+)$/m)).to.equal(1)
    expect(value(/^zeromesh_peer_ready (\d+)$/m)).to.equal(1)
    // Buckets are cumulative and end with every observation.
    const buckets = [...text.matchAll(/^zeromesh_client_request_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)].map((m) => Number(m[2]))
    expect(buckets.length).to.be.above(10)
    expect(buckets).to.deep.equal([...buckets].sort((a, b) => a - b))
    expect(buckets.at(-1)).to.equal(6)
  })
})

describe("the gossip's health in /metrics (issue 73, item 5)", function () {
  this.timeout(15000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('two peers: round trips, connections and an empty queue once they know each other; local health 0', async () => {
    const a = await h.peer({ handlers: { echo: (x) => x } })
    const b = await h.peer({ handlers: { echo: (x) => x }, seeds: [a.endpoint] })
    const registry = new promClient.Registry()
    peerMetrics(b, { registry })
    const value = async (re) => Number(re.exec(await registry.metrics())?.[1])
    await eventually(async () => expect(await value(/^zeromesh_peer_gossip_probe_rtt_ms\{quantile="0.99"\} (\S+)$/m)).to.be.above(0), { timeout: 5000 })
    expect(await value(/^zeromesh_peer_gossip_probe_rtt_ms\{quantile="0.99"\} (\S+)$/m)).to.be.below(200)
    expect(await value(/^zeromesh_peer_gossip_connections (\d+)$/m)).to.equal(1)
    expect(await value(/^zeromesh_peer_gossip_connections_opened_total (\d+)$/m)).to.be.at.least(1)
    await eventually(async () => expect(await value(/^zeromesh_peer_gossip_queue_depth (\d+)$/m)).to.equal(0), { timeout: 5000 })
    expect(await value(/^zeromesh_peer_gossip_local_health (\d+)$/m)).to.equal(0)
    for (const name of ['suspicions', 'refutations', 'deaths']) expect(await value(new RegExp(`^zeromesh_peer_gossip_${name}_total (\\d+)$`, 'm'))).to.equal(0)
    expect(b.stats().membership).to.include({ connections: 1, subjects: 1, queueDepth: 0, localHealth: 0 })
  })
})

describe('metrics of a fresh peer', function () {
  this.timeout(10000)
  const h = harness()
  afterEach(() => h.cleanup())

  // Issue 25, item 5: dashboards and alerts need a series before its first event.
  it('every labelled series a dashboard reads is there at 0 before anything happened', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x, add: ({ a, b }) => a + b } })
    const text = await peerMetrics(p).metrics()
    for (const reason of ['client-gone', 'client-not-reading', 'closed', 'handler-error']) expect(text, reason).to.include(`zeromesh_peer_dropped_total{reason="${reason}"} 0`)
    for (const action of ['collect', 'close_connections']) expect(text, action).to.include(`zeromesh_peer_memory_actions_total{action="${action}"} 0`)
    expect(text).to.include('zeromesh_peer_stream_held_bytes 0')
    for (const reason of ['key not allowed', 'not CURVE', 'wrong cluster key']) expect(text, reason).to.include(`zeromesh_peer_handshake_refusals_total{reason="${reason}"} 0`)
    for (const method of ['add', 'echo']) {
      expect(text).to.include(`zeromesh_peer_method_requests_total{method="${method}"} 0`)
      expect(text).to.include(`zeromesh_peer_method_errors_total{method="${method}"} 0`)
    }
  })
})

describe('the saturation an autoscaler reads (deploy/kubernetes/hpa.yaml)', function () {
  this.timeout(10000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('requests held over the declared capacity: 0 idle, 1.5 with 3 running on a capacity of 2, 0 again after', async () => {
    const gates = []
    const p = await h.peer({ capacity: 2, handlers: { hold: () => new Promise((resolve) => gates.push(resolve)) } })
    const c = h.client({ seeds: p.endpoint })
    const registry = peerMetrics(p)
    const saturation = async () => Number(/^zeromesh_peer_saturation (\S+)$/m.exec(await registry.metrics())[1])
    expect(await saturation()).to.equal(0)
    const calls = [1, 2, 3].map(() => c.request('hold'))
    await eventually(() => expect(gates).to.have.length(3), { interval: 5 }) // all three running
    expect(await saturation()).to.equal(1.5)
    for (const open of gates) open(null)
    await Promise.all(calls)
    expect(await saturation()).to.equal(0)
  })
})

