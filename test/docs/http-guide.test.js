// The HTTP guide's example runs as written (docs/guides/http-api.md): its contract.js,
// handlers.js and server.js, with ephemeral ports swapped in for 5555 and 3000; a
// `zeromesh peer` serves the handlers, the API answers /primes, refuses a bad limit with 400
// and its issues, and exits 0 on SIGTERM. The same API through zeromesh/http's gateway
// (gateway.js), its OpenAPI document through the outside validator, and the blog post's front
// written with it (front.js).
import { expect } from 'chai'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { startPeer, runScript, killAll, freePort } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { openapiErrors, asyncapiErrors } from '../helpers/api-docs.js'

const GUIDE = fileURLToPath(new URL('../../docs/guides/http-api.md', import.meta.url))

/** The ```js block of the guide whose first line is `// name` (or `// name: what it is`). */
function block (text, name) {
  const m = new RegExp('```js\\n(// ' + name.replace('.', '\\.') + '(?::[^\\n]*)?\\n[\\s\\S]*?)```').exec(text)
  if (m === null) throw new Error(`no block for ${name} in the guide`)
  return m[1]
}

describe('the HTTP guide\'s example', function () {
  this.timeout(30000)
  let dir
  before(() => { dir = mkdtempSync(path.join(fileURLToPath(new URL('.', import.meta.url)), 'http-guide-')) }) // inside the repository: 'zeromesh', express and zod resolve
  after(async () => { await killAll(); rmSync(dir, { recursive: true, force: true }) })

  it('runs as written: a peer with its handlers, the API answering, a 400 with issues, a clean exit', async () => {
    const text = readFileSync(GUIDE, 'utf8')
    for (const name of ['contract.js', 'handlers.js']) writeFileSync(path.join(dir, name), block(text, name))
    const peer = await startPeer(['--handlers', path.join(dir, 'handlers.js'), '--threads', '1'], { demo: false })
    const port = await freePort()
    const server = block(text, 'server.js').replace("'tcp://127.0.0.1:5555'", `'${peer.endpoint}'`).replace('app.listen(3000)', `app.listen(${port}, '127.0.0.1')`)
    expect(server).to.include(peer.endpoint)
    writeFileSync(path.join(dir, 'server.js'), server)
    const api = runScript(path.join(dir, 'server.js'), [])
    const get = (q) => fetch(`http://127.0.0.1:${port}${q}`).then(async (r) => ({ status: r.status, body: await r.json() }))
    await eventually(async () => expect((await get('/')).body).to.deep.equal({ hello: 'world' }), { timeout: 10000 })
    expect(await get('/primes?limit=1000')).to.deep.equal({ status: 200, body: { limit: 1000, count: 168 } })
    const bad = await get('/primes?limit=-1')
    expect(bad.status).to.equal(400)
    expect(bad.body.code).to.equal('ERR_ZEROMESH_INVALID_INPUT')
    expect(bad.body.issues[0].path).to.deep.equal(['limit'])
    api.child.kill('SIGTERM')
    expect(await api.exited).to.deep.equal({ code: 0, signal: null })
  })

  it('the gateway serves the contract\'s routes and their documents as written; the blog post\'s front in a few lines answers GET /', async () => {
    const text = readFileSync(GUIDE, 'utf8')
    for (const name of ['contract.js', 'handlers.js']) writeFileSync(path.join(dir, name), block(text, name))
    const peer = await startPeer(['--handlers', path.join(dir, 'handlers.js'), '--threads', '1'], { demo: false })
    const port = await freePort()
    const source = block(text, 'gateway.js').replace("'tcp://127.0.0.1:5555'", `'${peer.endpoint}'`).replace('.listen(3000)', `.listen(${port}, '127.0.0.1')`)
    expect(source).to.include(peer.endpoint).and.include(`.listen(${port}`)
    writeFileSync(path.join(dir, 'gateway.js'), source)
    const api = runScript(path.join(dir, 'gateway.js'), [])
    const base = `http://127.0.0.1:${port}`
    const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, body: await r.json() }))
    await eventually(async () => expect(await post('/primes/count', '{"limit": 1000}')).to.deep.equal({ status: 200, body: { limit: 1000, count: 168 } }), { timeout: 10000 })
    const bad = await post('/primes/count', '{"limit": -1}')
    expect([bad.status, bad.body.code, bad.body.issues[0].path]).to.deep.equal([400, 'ERR_ZEROMESH_INVALID_INPUT', ['limit']])
    const doc = await (await fetch(`${base}/openapi.json`)).json()
    expect(await openapiErrors(doc)).to.deep.equal([])
    expect(doc.paths['/primes/count'].post.operationId).to.equal('primes.count')
    expect(doc.info.version).to.equal('1.0.0')
    expect(await asyncapiErrors(await (await fetch(`${base}/asyncapi.json`)).json())).to.deep.equal([])
    api.child.kill('SIGTERM')
    expect(await api.exited).to.deep.equal({ code: 0, signal: null })

    // The blog post's front, its countdown on a peer (the bench's handler module).
    const counting = await startPeer(['--handlers', fileURLToPath(new URL('../../bench/lib/countdown-handlers.js', import.meta.url)), '--threads', '1'], { demo: false, env: { COUNTDOWN_FROM: '1000' } })
    const port2 = await freePort()
    const front = block(text, 'front.js').replace("'tcp://127.0.0.1:5555'", `'${counting.endpoint}'`).replace('.listen(3000)', `.listen(${port2}, '127.0.0.1')`)
    expect(front).to.include(counting.endpoint).and.include(`.listen(${port2}`)
    writeFileSync(path.join(dir, 'front.js'), front)
    const app = runScript(path.join(dir, 'front.js'), [])
    await eventually(async () => {
      const r = await fetch(`http://127.0.0.1:${port2}/`)
      expect([r.status, await r.json()]).to.deep.equal([200, 'done'])
    }, { timeout: 10000 })
    expect(await (await fetch(`http://127.0.0.1:${port2}/cheap`)).text()).to.equal('ok')
    app.child.kill('SIGKILL')
  })
})
