// The HTTP guide's example runs as written (docs/guides/http-api.md): its contract.js,
// handlers.js and server.js, with ephemeral ports swapped in for 5555 and 3000; a
// `zeromesh peer` serves the handlers, the API answers /primes, refuses a bad limit with 400
// and its issues, and exits 0 on SIGTERM.
import { expect } from 'chai'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { startPeer, runScript, killAll, freePort } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'

const GUIDE = fileURLToPath(new URL('../../docs/guides/http-api.md', import.meta.url))

/** The ```js block of the guide whose first line is `// name`. */
function block (text, name) {
  const m = new RegExp('```js\\n(// ' + name.replace('.', '\\.') + '\\n[\\s\\S]*?)```').exec(text)
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
})
