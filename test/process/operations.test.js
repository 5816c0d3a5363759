// Running `zeromesh peer` as a service: under a supervisor's IPC channel, configured from the
// environment, logging JSON lines, with the operations endpoint (/metrics, /healthz, /readyz).
// Real child processes on 127.0.0.1 with ephemeral ports.
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { run, startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'

const IPC_LISTENER = fileURLToPath(new URL('../fixtures/ipc-listener.cjs', import.meta.url))
const logLines = (c) => c.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l))
const get = async (url) => { const r = await fetch(url); return { status: r.status, text: await r.text() } }

describe('zeromesh peer as a service', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  it('exits after its drain although the process holds an IPC message listener (as under pm2)', async () => {
    const p = await startPeer(['--threads', '1'], { ipc: true, nodeArgs: ['--require', IPC_LISTENER] })
    const c = h.client({ seeds: p.endpoint, idempotent: false })
    const slow = c.request('sleep', { ms: 300 })
    await eventually(() => expect(c.peers()[0].inflight).to.equal(1))
    const t0 = Date.now()
    process.kill(p.pid, 'SIGINT') // what pm2 sends
    expect(await slow).to.deep.equal({ slept: 300 })
    expect(await p.exited).to.deep.equal({ code: 0, signal: null })
    expect(Date.now() - t0).to.be.below(3000)
  })

  it('tells a supervisor "ready" once joined, and says when no seed is reachable until then', async () => {
    // A seed on a port nobody listens on yet: the peer serves alone and says so.
    const first = await startPeer(['--threads', '0'])
    process.kill(first.pid, 'SIGKILL')
    await first.exited
    const p = await startPeer(['--threads', '0', '--seeds', first.endpoint], { ipc: true })
    await eventually(() => expect(logLines(p).some((l) => l.level === 'warn' && /no seed reachable .* after 2 attempts/.test(l.msg))).to.equal(true), { timeout: 5000 })
    expect(p.messages).to.deep.equal([])
    // The seed comes back on its endpoint: the peer joins and is ready.
    const port = first.endpoint.split(':').pop()
    const seed = await startPeer(['--threads', '0', '--bind', `tcp://127.0.0.1:${port}`])
    await eventually(() => expect(p.messages).to.deep.equal(['ready']), { timeout: 10000 })
    expect(logLines(p).find((l) => /^joined the cluster through/.test(l.msg))).to.deep.include({ level: 'info', through: [seed.endpoint] })
    const alone = await startPeer(['--threads', '0'], { ipc: true })
    await eventually(() => expect(alone.messages).to.deep.equal(['ready'])) // no seeds: ready at once
  })

  it('takes every flag from ZEROMESH_* variables (flags win), and --log-level', async () => {
    const seed = await startPeer(['--threads', '0'])
    const env = { ZEROMESH_SEEDS: seed.endpoint, ZEROMESH_THREADS: '0', ZEROMESH_META: '{"zone":"env"}', ZEROMESH_LOG_LEVEL: 'warn', ZEROMESH_DRAIN_TIMEOUT: 'soon' }
    const bad = run(['peer', '--bind', 'tcp://127.0.0.1:0'], { env })
    expect((await bad.exited).code).to.equal(2)
    expect(bad.stderr).to.match(/--drain-timeout must be a whole number of milliseconds, got "soon"/)
    const p = await startPeer(['--drain-timeout', '100'], { env })
    const c = h.client({ seeds: p.endpoint })
    await eventually(async () => {
      const list = await c.members(p.endpoint)
      expect(list.map((m) => m.endpoint).sort()).to.deep.equal([p.endpoint, seed.endpoint].sort())
      expect(list.find((m) => m.endpoint === p.endpoint).meta).to.deep.include({ zone: 'env' })
    }, { timeout: 5000 })
    expect(p.stderr).to.not.match(/"level":"info"/) // warn and above only
    const insecure = run(['peer', '--bind', 'tcp://127.0.0.1:0'], { env: { ZEROMESH_INSECURE: 'maybe' } })
    expect((await insecure.exited).code).to.equal(2)
    expect(insecure.stderr).to.match(/ZEROMESH_INSECURE must be true or false/)
  })

  it('--http: /metrics moves with traffic, /healthz answers, /readyz turns 503 from the moment the peer drains', async () => {
    const p = await startPeer(['--threads', '1', '--http', '0', '--drain-timeout', '2000'])
    const line = await eventually(() => { const l = logLines(p).find((x) => x.http !== undefined); expect(l).to.not.equal(undefined); return l })
    const base = `http://${line.http}`
    expect(await get(`${base}/healthz`)).to.deep.equal({ status: 200, text: 'ok\n' })
    expect((await get(`${base}/readyz`)).status).to.equal(200)
    const c = h.client({ seeds: p.endpoint })
    for (let i = 0; i < 20; i++) await c.request('echo', i)
    await c.request('whoami')
    // A method the peer does not serve never reaches it: the client knows what it serves.
    expect((await c.request('nope').catch((err) => err)).code).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD')
    const metrics = (await get(`${base}/metrics`)).text
    const value = (re) => Number(re.exec(metrics)?.[1])
    expect(value(/^zeromesh_peer_requests_total (\d+)$/m)).to.equal(21)
    expect(value(/^zeromesh_peer_replies_total\{outcome="ok"\} (\d+)$/m)).to.equal(21)
    expect(value(/^zeromesh_peer_replies_total\{outcome="unknown_method"\} (\d+)$/m)).to.equal(0)
    expect(value(/^zeromesh_peer_method_requests_total\{method="echo"\} (\d+)$/m)).to.equal(20)
    expect(value(/^zeromesh_peer_method_requests_total\{method="whoami"\} (\d+)$/m)).to.equal(1)
    expect(metrics).to.not.match(/method="nope"/)
    expect(value(/^zeromesh_peer_request_duration_seconds_count (\d+)$/m)).to.equal(21)
    expect(value(/^zeromesh_peer_members\{state="alive"\} (\d+)$/m)).to.equal(1)
    expect(value(/^zeromesh_peer_threads (\d+)$/m)).to.equal(1)
    expect(metrics).to.match(/^# TYPE zeromesh_peer_request_duration_seconds histogram$/m)
    expect(metrics).to.match(/^zeromesh_peer_request_duration_seconds_bucket\{le="\+Inf"\} 21$/m)
    // Draining: not ready at once, while the in-flight request finishes.
    const slow = c.request('sleep', { ms: 800 }, { idempotent: false })
    await eventually(async () => expect((await get(`${base}/metrics`)).text).to.match(/^zeromesh_peer_inflight 1$/m))
    process.kill(p.pid, 'SIGTERM')
    await eventually(async () => expect((await get(`${base}/readyz`)).status).to.equal(503), { timeout: 1000, interval: 20 })
    expect(await slow).to.deep.equal({ slept: 800 })
    expect((await p.exited).code).to.equal(0)
  })
})
