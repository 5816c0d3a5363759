// examples/express runs as its comments say: a `zeromesh peer` process with the example's
// handler module in a worker thread, the Express API in another process, and HTTP requests
// to its cheap and heavy routes; errors come back as the HTTP statuses the example maps.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { startPeer, killAll } from '../helpers/processes.js'
import { httpAnswerOf } from 'zeromesh/http'
import { BusyError, DrainingError, TimeoutError, NoPeersError, NoSubscribersError, InvalidArgumentError, InvalidInputError, RemoteError, ClosedError, UnknownMethodError } from '../../index.js'

const DIR = fileURLToPath(new URL('../../examples/express/', import.meta.url))

/** Starts the example's app.js with `seeds`; resolves with { child, url } once it listens. */
function startApi (seeds) {
  const child = spawn(process.execPath, ['app.js'], { cwd: DIR, env: { ...process.env, ZEROMESH_SEEDS: seeds, PORT: '0', TIMEOUT_MS: '2000' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the API did not start: ${err}`)), 15000)
    child.stdout.on('data', (d) => {
      const m = /listening on (\S+)/.exec(d.toString())
      if (m) { clearTimeout(timer); resolve({ child, url: m[1], exited: new Promise((r) => child.once('exit', (code) => r(code))) }) }
    })
  })
}

describe('examples/express (processes)', function () {
  this.timeout(60000)
  let peer, api
  before(async () => {
    peer = await startPeer(['--handlers', `${DIR}handlers.js`, '--threads', '1'], { demo: false })
    api = await startApi(peer.endpoint)
  })
  after(async () => {
    if (api && api.child.exitCode === null) api.child.kill('SIGKILL')
    await killAll()
  })

  it('answers the cheap route, the heavy route through the peer\'s thread, and 400 with the contract\'s issues for bad input', async () => {
    expect(await (await fetch(`${api.url}/`)).json()).to.deep.equal({ hello: 'world' })
    const heavy = await Promise.all(Array.from({ length: 8 }, () => fetch(`${api.url}/primes?limit=20000`).then((r) => r.json())))
    for (const h of heavy) expect(h).to.deep.equal({ limit: 20000, count: 2262 })
    for (const q of ['-1', '1.5', 'abc']) {
      const bad = await fetch(`${api.url}/primes?limit=${q}`)
      expect(bad.status, q).to.equal(400)
      const body = await bad.json()
      expect(body.code).to.equal('ERR_ZEROMESH_INVALID_INPUT')
      expect(body.issues[0].path).to.deep.equal(['limit'])
    }
  })

  it('with its peer gone, the heavy route answers 503 with Retry-After or 504, and the cheap route still 200', async () => {
    process.kill(peer.pid, 'SIGKILL')
    await peer.exited
    const t0 = Date.now()
    const res = await fetch(`${api.url}/primes?limit=1000`)
    expect([503, 504]).to.include(res.status)
    if (res.status === 503) expect(res.headers.get('retry-after')).to.equal('1')
    expect((await res.json()).code).to.match(/^ERR_ZEROMESH_/)
    expect(Date.now() - t0).to.be.below(4000) // TIMEOUT_MS 2000 here
    expect((await fetch(`${api.url}/`)).status).to.equal(200)
  })

  it('closes its client and its server on SIGTERM and exits 0', async () => {
    api.child.kill('SIGTERM')
    expect(await api.exited).to.equal(0)
  })

  it('maps every zeromesh error to its HTTP status', () => {
    const cases = [
      [new BusyError(), 503, 1], [new DrainingError(), 503, 1], [new NoPeersError(), 503, 1], [new ClosedError(), 503, 1],
      [new NoSubscribersError(), 503, 1], [new TimeoutError(), 504, null], [new InvalidArgumentError(), 400, null], [new InvalidInputError(), 400, null],
      [new RemoteError('boom', { remoteCode: 'E_X' }), 500, null], [new UnknownMethodError(), 500, null], [new Error('plain'), 500, null],
    ]
    for (const [err, status, retryAfter] of cases) expect(httpAnswerOf(err), err.code).to.deep.include({ status, retryAfter })
    expect(httpAnswerOf(new RemoteError('secret detail', { remoteCode: 'E_X' })).body).to.deep.equal({ error: 'internal error', code: 'ERR_ZEROMESH_REMOTE' })
    expect(httpAnswerOf(Object.assign(new InvalidInputError('bad limit'), { issues: [{ message: 'too big', path: ['limit'] }] })).body).to.deep.equal({ error: 'bad limit', code: 'ERR_ZEROMESH_INVALID_INPUT', issues: [{ message: 'too big', path: ['limit'] }] })
  })
})
