// The live view's server side (ops/http.js, ops/view.js; README "Observing it"): what /state
// and /events say, the Host check against DNS rebinding, the Content-Security-Policy, the cap
// on event streams, and when --http turns the view on. The page in a real browser:
// test/scenarios/view.scenario.js.
import { expect } from 'chai'
import http from 'node:http'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { peerMetrics } from '../../ops/metrics.js'
import { startOpsServer } from '../../ops/http.js'
import { ClusterView, quantile } from '../../ops/view.js'
import { BOUNDS_MS } from '../../ops/histogram.js'
import { httpOption, UsageError } from '../../bin/args.js'
import { insideOf } from '../../peer/peer.js'

/** GET `path` with a Host header of our choosing; resolves { status, headers, body } (an event stream: its first event). */
function get (port, path, host = `127.0.0.1:${port}`) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => {
        body += d
        if (res.headers['content-type'] === 'text/event-stream' && body.includes('\n\n')) resolve({ status: res.statusCode, headers: res.headers, body, res })
      })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }))
    })
    req.on('error', reject)
  })
}

describe('the live view (server side)', function () {
  this.timeout(20000)
  const h = harness()
  const servers = []
  const streams = []
  afterEach(async () => {
    for (const r of streams.splice(0)) r.destroy()
    for (const s of servers.splice(0)) await s.close()
    await h.cleanup()
  })

  async function viewed (handlers, o = {}) {
    const p = await h.peer({ handlers, labels: { zone: 'a' }, events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
    const registry = peerMetrics(p)
    const view = new ClusterView(p, insideOf(p).latency, o)
    const s = await startOpsServer({ host: '127.0.0.1', port: 0, registry, ready: () => p.ready, view })
    servers.push(s)
    return { p, s, view }
  }

  it('serves the page under a strict CSP, answers only loopback Host names, and /state says who is there and what it serves', async () => {
    const watched = []
    const { p, s } = await viewed({ echo: (x) => x }, { watch: () => { watched.push(1); return { services: () => new Map(), close: () => {} } } })
    for (const path of ['/', '/view.js', '/view.css', '/favicon.svg']) {
      const r = await get(s.port, path)
      expect(r.status, path).to.equal(200)
      expect(r.headers['content-security-policy']).to.equal("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
      expect(r.headers['x-content-type-options']).to.equal('nosniff')
    }
    expect((await get(s.port, '/')).body).to.not.match(/<script>|\sstyle=|\son[a-z]+=/) // nothing inline for the CSP to block
    for (const host of [`localhost:${s.port}`, `127.0.0.1:${s.port}`, 'localhost']) expect((await get(s.port, '/state', host)).status, host).to.equal(200)
    // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends its own Host.
    for (const host of [`evil.example:${s.port}`, 'evil.example', `127.0.0.1.evil.example:${s.port}`]) {
      for (const path of ['/', '/state', '/events', '/view.js']) expect((await get(s.port, path, host)).status, `${host} ${path}`).to.equal(421)
    }
    expect((await get(s.port, '/metrics', 'evil.example')).status).to.equal(200) // scrapers name the pod's address: not the view's business

    const state = JSON.parse((await get(s.port, '/state')).body)
    expect(state.self).to.include({ endpoint: p.endpoint, ready: true, inflight: 0 })
    expect(state.members[0]).to.deep.include({ endpoint: p.endpoint, state: 'alive', self: true, serves: { methods: ['echo'], version: null, labels: { zone: 'a', 'zeromesh/events': p.service().labels['zeromesh/events'] }, contracts: [], events: [{ event: 'orders.placed', group: 'billing' }] } })
    expect(watched).to.deep.equal([]) // nobody watches yet: no client of the cluster
  })

  it('streams the state once a second to at most 8 viewers, and starts the watcher of what members serve while someone views', async () => {
    let closed = 0
    const { p, s, view } = await viewed({ echo: (x) => x }, { watch: () => ({ services: () => new Map(), close: () => { closed++ } }) })
    const first = await get(s.port, '/events')
    streams.push(first.res)
    expect(first.headers['content-type']).to.equal('text/event-stream')
    expect(first.headers['content-security-policy']).to.include("connect-src 'self'")
    expect(JSON.parse(first.body.split('data: ')[1]).self.endpoint).to.equal(p.endpoint)
    expect(view.watcher).to.not.equal(null)
    const events = []
    first.res.on('data', (d) => events.push(String(d)))
    await eventually(() => expect(events.join('').split('\n\n').filter((e) => e.includes('data: ')).length).to.be.at.least(2), { timeout: 4000 })
    for (let i = 1; i < 8; i++) streams.push((await get(s.port, '/events')).res)
    const ninth = await get(s.port, '/events')
    expect(ninth.status).to.equal(503)
    expect(ninth.headers['retry-after']).to.equal('10')
    for (const r of streams.splice(0)) r.destroy()
    await eventually(() => expect(view.viewers).to.equal(0))
    const again = await get(s.port, '/events') // the places are free again
    streams.push(again.res)
    expect(again.status).to.equal(200)
    expect(closed).to.equal(0) // the watcher lingers between viewers
  })

  it('measures req/s and p50/p99 from the peer\'s latency histogram', async () => {
    let now = 1000
    const { p, view } = await viewed({ echo: (x) => x }, { now: () => now })
    const c = h.client({ seeds: [p.endpoint] })
    for (let i = 0; i < 50; i++) await c.request('echo', i)
    now += 1000
    const state = view.sample()
    expect(state.self.rps).to.be.at.least(50) // 50 in the last second, and the one waitFor-style request before
    expect(state.self.p50).to.be.a('number').and.above(0)
    expect(state.self.p99).to.be.at.least(state.self.p50)
    expect(state.history.at(-1)).to.include({ rps: state.self.rps })
  })

  it('takes quantiles of bucket counts as histogram_quantile does', () => {
    const counts = new Float64Array(BOUNDS_MS.length + 1)
    expect(quantile(counts, 0.5)).to.equal(null)
    counts[3] = 100 // all in (0.5, 1] ms
    expect(quantile(counts, 0.5)).to.equal(0.75)
    expect(quantile(counts, 0.99)).to.equal(0.995)
    counts[BOUNDS_MS.length] = 1000 // most above the last bound: all that is known is "above"
    expect(quantile(counts, 0.99)).to.equal(BOUNDS_MS.at(-1))
  })

  it('is on by default when --http is on loopback, off elsewhere, and --http-view says otherwise', () => {
    expect(httpOption('9090', undefined, '')).to.deep.equal({ host: '127.0.0.1', port: 9090, view: true })
    expect(httpOption('[::1]:9090', undefined, '').view).to.equal(true)
    expect(httpOption('0.0.0.0:9090', undefined, '').view).to.equal(false)
    expect(httpOption('10.1.2.3:9090', 'on', '').view).to.equal(true)
    expect(httpOption('9090', 'off', '').view).to.equal(false)
    expect(() => httpOption('9090', 'yes', '')).to.throw(UsageError, /on or off/)
    expect(() => httpOption(undefined, 'on', '')).to.throw(UsageError, /goes with --http/)
    expect(httpOption(undefined, undefined, '')).to.equal(null)
  })

  it('without the view, / and /events are not served and nothing samples', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x } })
    const s = await startOpsServer({ host: '127.0.0.1', port: 0, registry: peerMetrics(p), ready: () => true })
    servers.push(s)
    for (const path of ['/', '/events', '/state', '/view.js']) expect((await get(s.port, path)).status, path).to.equal(404)
    expect((await get(s.port, '/metrics')).status).to.equal(200)
  })
})
