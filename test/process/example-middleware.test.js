// examples/middleware runs as its comments say: `zeromesh peer --handlers` with a module whose
// `middleware` export the peer loads on its main thread (logging, bearer-token auth, one
// `report` at a time), its handlers in a worker thread reading the tenant the auth middleware
// put in the headers; a client whose middleware sends the token.
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { startPeer, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { client } from '../../examples/middleware/client.js'
import { RemoteError } from '../../index.js'

const HANDLERS = fileURLToPath(new URL('../../examples/middleware/handlers.js', import.meta.url))

describe('examples/middleware (processes)', function () {
  this.timeout(30000)
  let peer
  const clients = []
  before(async () => {
    peer = await startPeer(['--handlers', HANDLERS, '--threads', '1'], { demo: false, env: { API_TOKENS: 's3cret=acme,t0ken=globex' } })
  })
  after(async () => {
    await Promise.all(clients.map((c) => c.close()))
    await killAll()
  })
  const clientOf = (token) => { const c = client([peer.endpoint], token); clients.push(c); return c }

  it('a known token reaches the handler in its thread as the tenant, the token itself stopped at the middleware', async () => {
    const c = clientOf('s3cret')
    expect(await c.request('hello')).to.deep.equal({ tenant: 'acme', headers: ['x-tenant'] })
    expect(await clientOf('t0ken').request('hello')).to.deep.equal({ tenant: 'globex', headers: ['x-tenant'] })
  })

  it('a bad or missing token fails at once with the middleware\'s code, not retried', async () => {
    for (const c of [clientOf('wrong'), clientOf('')]) {
      let err = null
      try { await c.request('hello', null, { idempotent: true }) } catch (e) { err = e }
      expect(err).to.be.instanceOf(RemoteError)
      expect(err.remoteCode).to.equal('E_UNAUTHORIZED')
      expect(err.retryable).to.equal(false)
      expect(c.stats().retries).to.equal(0)
    }
  })

  it('runs one report at a time: four at once run one after another', async () => {
    const c = clientOf('s3cret')
    const runs = (await Promise.all(Array.from({ length: 4 }, () => c.request('report', { ms: 60 })))).sort((a, b) => a.start - b.start)
    for (let i = 1; i < runs.length; i++) expect(runs[i].start, `run ${i} began after run ${i - 1} ended`).to.be.at.least(runs[i - 1].end)
  })

  it('logs each call with its method and tenant on stderr, and never the token', async () => {
    // The peer's log lines reach its stderr a little after the replies (a loaded machine: one late line seen).
    await eventually(() => {
      const lines = peer.stderr.split('\n').filter((l) => l.includes('"msg":"call"')).map((l) => JSON.parse(l))
      expect(lines.some((l) => l.method === 'hello' && l.tenant === 'acme' && l.ok === true)).to.equal(true)
      expect(lines.some((l) => l.method === 'hello' && l.tenant === null && l.ok === false && l.code === 'E_UNAUTHORIZED')).to.equal(true)
      expect(lines.filter((l) => l.method === 'report')).to.have.length(4)
    }, { timeout: 3000 })
    expect(peer.stderr).to.not.include('s3cret')
  })
})
