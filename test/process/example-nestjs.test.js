// examples/nestjs runs as its comments say, with real Nest packages: the example compiled to
// CommonJS in a temporary directory (bench/lib/nest-example.js), the microservice (a zeromesh peer, heavy.run in two
// worker threads) and the HTTP gateway as processes, and HTTP requests to the tutorial's
// routes: the heavy one, the cheap one, a 400, a 503 or 504 with the microservice killed, and
// a SIGTERM to the gateway with requests in flight that loses none (Nest closes the HTTP
// server, then runs onApplicationShutdown, where ClientsModule closes the ZeromeshClient, whose
// close() lets calls in flight finish).
import { expect } from 'chai'
import path from 'node:path'
import { runScript, killAll } from '../helpers/processes.js'
import { buildNestExample } from '../../bench/lib/nest-example.js'
import { eventually } from '../helpers/eventually.js'
import { rawAsker } from '../helpers/raw.js'
import { encodeRequest } from '../../protocol/index.js'

/** Starts dist/`script` with `env`; resolves with the process once its first stdout line matches `ready`. */
async function start (dist, script, env, ready) {
  const c = runScript(path.join(dist, script), [], { env })
  c.line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${c.stderr}`)), 20000)
    c.child.stdout.on('data', () => {
      const m = ready.exec(c.stdout)
      if (m) { clearTimeout(timer); resolve(m[1]) }
    })
    c.exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`${script} exited (${code ?? signal}) before it was ready: ${c.stderr}`)) })
  })
  return c
}
const microservice = (dist) => start(dist, 'microservice.js', { BIND: 'tcp://127.0.0.1:0', THREADS: '2' }, /^(tcp:\S+)\n/)
const gateway = (dist, seeds, timeoutMs = 1000) => start(dist, 'gateway.js', { ZEROMESH_SEEDS: seeds, PORT: '0', TIMEOUT_MS: String(timeoutMs) }, /listening on (\S+)\n/)

describe('examples/nestjs (processes, real Nest packages)', function () {
  this.timeout(90000)
  let built
  let dist
  before(async () => { built = await buildNestExample(); dist = built.dist })
  after(() => built?.remove())
  afterEach(() => killAll())

  it('answers the cheap route, the heavy route on the microservice\'s threads, and 400 with the contract\'s issues for a bad n', async () => {
    const ms = await microservice(dist)
    const gw = await gateway(dist, ms.line)
    expect(await (await fetch(`${gw.line}/`)).text()).to.equal('Hello World!')
    const heavy = await Promise.all(Array.from({ length: 6 }, () => fetch(`${gw.line}/heavy?n=2000000`).then((r) => r.json())))
    for (const h of heavy) expect(h).to.include({ count: 2000000, pid: ms.pid })
    expect(new Set(heavy.map((h) => h.threadId)).has(0)).to.equal(false) // never the main thread
    for (const q of ['abc', '-1', '1.5']) {
      const bad = await fetch(`${gw.line}/heavy?n=${q}`)
      expect(bad.status, q).to.equal(400)
      const body = await bad.json()
      expect(body.code).to.equal('ERR_ZEROMESH_INVALID_INPUT')
      expect(body.issues[0].path).to.deep.equal(['n'])
    }
  })

  it('SIGTERM to the gateway with requests in flight: each is answered 200, then it exits', async () => {
    const ms = await microservice(dist)
    // A deadline far beyond the work (about 1 s on an idle machine, several on a loaded CI one):
    // what is tested is the shutdown, not the deadline (a 1 s deadline answered 504 under load)
    const gw = await gateway(dist, ms.line, 30000)
    expect((await fetch(`${gw.line}/heavy?n=1000`)).status).to.equal(200) // the client knows the peer
    const inflight = Array.from({ length: 6 }, () => fetch(`${gw.line}/heavy?n=200000000`).then((r) => r.status, (err) => err.message))
    // All 6 reached the gateway, which called the microservice with each: the load its replies carry says it holds 6
    const raw = rawAsker()
    try {
      await eventually(async () => expect((await raw.ask(ms.line, encodeRequest([[1, 'no.such.method', null, 1000]]))).msg.meta.load).to.equal(6), { timeout: 10000 })
    } finally { raw.close() }
    process.kill(gw.pid, 'SIGTERM')
    expect(await Promise.all(inflight)).to.deep.equal([200, 200, 200, 200, 200, 200])
    expect(await gw.exited).to.deep.equal({ code: null, signal: 'SIGTERM' }) // Nest's shutdown hooks close the app, then raise the signal again
    expect(gw.stderr).to.match(/zeromesh client: \{"requests":7,"ok":7,/)
  })

  it('with the microservice killed, the heavy route answers 503 with Retry-After or 504, and the cheap route still 200', async () => {
    const ms = await microservice(dist)
    const gw = await gateway(dist, ms.line)
    expect((await fetch(`${gw.line}/heavy?n=1000`)).status).to.equal(200)
    process.kill(ms.pid, 'SIGKILL')
    await ms.exited
    await eventually(async () => {
      const res = await fetch(`${gw.line}/heavy?n=1000`)
      expect([503, 504]).to.include(res.status)
      if (res.status === 503) expect(res.headers.get('retry-after')).to.equal('1')
    })
    expect((await fetch(`${gw.line}/`)).status).to.equal(200)
  })
})
