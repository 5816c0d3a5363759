// The guides' JavaScript snippets run (issue 68, item 7). Each ```js block of docs/guides is
// run by a test here or in http-guide.test.js, or listed in NOT_RUN with why; a block that is
// neither fails the first test, so a new snippet is run or explained. A snippet that shows a
// fragment of a program runs inside what the guide describes around it (a `prelude`: the
// client or peer the guide set up, the user's own functions it names), in a block of its own.
// Ports: the guides' tcp://127.0.0.1:555x become ephemeral endpoints of peers started here.
// The program ends with process.exit(0) once its top level is done: a rejection fails it.
import { expect } from 'chai'
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { startPeer, runScript, killAll, run } from '../helpers/processes.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const GUIDES = path.join(ROOT, 'docs/guides')

/** The ```js blocks of a guide, in order. */
function blocks (page) {
  const text = readFileSync(path.join(GUIDES, page), 'utf8')
  return [...text.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1])
}

/** Block `i` of `page`, checked to begin as expected (a block moved or added shows here). */
function block (page, i, begins) {
  const code = blocks(page)[i]
  expect(code, `${page} block ${i}`).to.be.a('string')
  expect(code.trimStart().startsWith(begins), `${page} block ${i} begins ${JSON.stringify(begins)}`).to.equal(true)
  return code
}

// What each guide's blocks are, by index: run here (RUN), in http-guide.test.js, or not run.
const RUN = {
  'contracts.md': [0, 1, 2, 3, 4],
  'deploying.md': [0],
  'events.md': [0, 1, 2, 3],
  'middleware.md': [0],
  'observing.md': [1, 2],
  'security.md': [0],
  'services.md': [0],
  'streams.md': [0],
  'testing.md': [0],
}
RUN['http-api.md'] = [3]
const ELSEWHERE = { 'http-api.md': [0, 1, 2, 4, 5] } // test/docs/http-guide.test.js
const NOT_RUN = {
  'events.md': { 4: 'a sketch of three places at once (a contract, billing\'s handler module, a client); the same calls (on(), proxy(...).events.placed.publish) run in test/integration/events.test.js', 5: 'needs a nats-server, which npm test does not start: npm run test:jetstream runs it against a real one (test/jetstream/durable.jetstream.js)' },
  'observing.md': { 0: 'needs @opentelemetry/sdk-node and an exporter of the user\'s, neither installed by zeromesh; the SDK\'s in-memory exporter runs the same path in test/integration/tracing.test.js' },
  'python.md': {
    0: 'calls the guide\'s Python peer, which npm test does not install (npm run test:python runs the Python peer against Node clients)',
    1: 'calls the guide\'s Python contract peer, which npm test does not install: python/tests/test_guide.py runs it against that peer (npm run test:python)',
  },
}

describe('the guides\' snippets run', function () {
  this.timeout(60000)
  let dir
  before(() => { dir = mkdtempSync(path.join(fileURLToPath(new URL('.', import.meta.url)), 'guides-run-')) }) // inside the repository: 'zeromesh', zod and @opentelemetry/api resolve
  after(async () => { await killAll(); rmSync(dir, { recursive: true, force: true }) })

  /** Writes `code` as `name` in the scratch directory; returns its path. */
  const file = (name, code) => { const p = path.join(dir, name); writeFileSync(p, code); return p }

  /** Runs `code` as a module to its end (then exit 0); resolves with its stdout, rejects with its stderr. */
  async function program (name, code) {
    const p = file(name, `${code}\nprocess.exit(0)\n`)
    const c = runScript(p, [], { env: { ZEROMESH_LOG_LEVEL: 'error' } })
    const timer = setTimeout(() => c.child.kill('SIGKILL'), 30000)
    const { code: exit, signal } = await c.exited
    clearTimeout(timer)
    if (exit !== 0) throw new Error(`${name} exited ${exit ?? signal}:\n${c.stdout}\n${c.stderr}`)
    return c.stdout
  }

  const swap = (code, map) => Object.entries(map).reduce((s, [from, to]) => s.replaceAll(from, to), code)
  const fragment = (code) => `{\n${code}}\n` // a block of its own: its names do not clash with the program's

  it('every block of every guide is run by a test or listed with why it is not', () => {
    const unaccounted = []
    for (const page of readdirSync(GUIDES).filter((f) => f.endsWith('.md'))) {
      const accounted = new Set([...(RUN[page] ?? []), ...(ELSEWHERE[page] ?? []), ...Object.keys(NOT_RUN[page] ?? {}).map(Number)])
      blocks(page).forEach((_, i) => { if (!accounted.has(i)) unaccounted.push(`${page} block ${i}`) })
      for (const i of accounted) if (i >= blocks(page).length) unaccounted.push(`${page} has no block ${i}`)
    }
    expect(unaccounted).to.deep.equal([])
  })

  it('contracts: the contract, its handlers on a `zeromesh peer`, the client, a refused input and describe()', async () => {
    file('orders-contract.js', block('contracts.md', 0, '// orders-contract.js'))
    const handlers = file('handlers.js', block('contracts.md', 1, '// handlers.js'))
    const peer = await startPeer(['--handlers', handlers, '--threads', '0'], { demo: false })
    const ports = { 'tcp://127.0.0.1:5555': peer.endpoint }
    const out = await program('contracts-client.js', [
      swap(block('contracts.md', 2, "import { Client } from 'zeromesh'"), ports),
      'console.log(JSON.stringify(order))',
      fragment(block('contracts.md', 3, 'try {').replace('err.issues //', 'console.log(err.issues.map((i) => i.path.join("."))) //')),
      fragment(swap(block('contracts.md', 4, 'const d = await client.describe'), ports) + 'console.log(d.contracts.map((c) => c.name))\n'),
    ].join('\n'))
    expect(out).to.equal('0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n{"id":"A-17","qty":2,"total":1200}\n[ \'id\', \'qty\' ]\n[ \'orders\' ]\n')
  })

  it('events: billing and shipping each get the order; a timeout, a failed publish and a broadcast as the guide shows them', async () => {
    const out = await program('events.js', [
      block('events.md', 0, "import { Peer, Client } from 'zeromesh'"),
      'console.log(delivered.map((d) => d.group).sort(), all.map((d) => d.endpoint === api.endpoint), failed.length, unreached.length, cache.has("user:42"))',
      'const order = { id: 8, total: 300 }', // the guide's running example
      fragment(block('events.md', 1, 'const { delivered } = await client.publish')),
      fragment(block('events.md', 2, 'try {')),
      // An API instance the guide's broadcast is for: a peer subscribed to config.reload.
      "const reloading = new Peer({ seeds: [billing.endpoint], events: { 'config.reload': { handler: () => console.log('reloaded') } } })",
      'await reloading.start()',
      fragment(block('events.md', 3, 'const { delivered, failed, unreached } = await client.broadcast') + 'console.log(delivered.length, failed.length, unreached.length)\n'),
    ].join('\n'))
    const lines = out.trim().split('\n')
    expect(lines.filter((l) => l === 'charged order 7')).to.have.length(1)
    expect(lines.filter((l) => l === 'shipped order 7')).to.have.length(1)
    expect(lines).to.include("[ 'billing', 'shipping' ] [ true ] 0 0 false")
    expect(lines.filter((l) => l === 'charged order 8')).to.have.length(2) // the timeout's publish and the try's
    expect(lines.slice(-2)).to.deep.equal(['reloaded', '1 0 0'])
  })

  it('http-api: the Express error handler answers a zeromesh error with its status and Retry-After', async () => {
    const handler = file('http-errors.js', block('http-api.md', 3, "import { httpAnswerOf } from 'zeromesh/http'"))
    const { zeromeshErrors } = await import(handler)
    const { default: express } = await import('express')
    const { BusyError, InvalidInputError } = await import('zeromesh')
    const app = express()
    app.get('/busy', () => { throw new BusyError('zeromesh: every peer was busy') })
    app.get('/bad', () => { throw new InvalidInputError('bad input', { issues: [{ path: ['limit'], message: 'Too small' }] }) })
    app.use(zeromeshErrors)
    const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
    try {
      const base = `http://127.0.0.1:${server.address().port}`
      const busy = await fetch(`${base}/busy`)
      expect([busy.status, busy.headers.get('retry-after'), (await busy.json()).code]).to.deep.equal([503, '1', 'ERR_ZEROMESH_BUSY'])
      const bad = await fetch(`${base}/bad`)
      expect(bad.status).to.equal(400)
      expect((await bad.json()).issues[0].path).to.deep.equal(['limit'])
    } finally {
      server.closeAllConnections() // fetch keeps its connections alive
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('testing: the in-memory network\'s example prints 5, then 9 and A down', async () => {
    expect(await program('testing.js', block('testing.md', 0, "import { Peer, Client } from 'zeromesh'"))).to.equal('5\n9 down\n')
  })

  it('security: the CURVE example adds over CURVE with keys from `zeromesh keygen`', async () => {
    const cwd = mkdtempSync(path.join(dir, 'keys-'))
    for (const prefix of ['cluster', 'alice']) {
      const k = run(['keygen', path.join(cwd, prefix)])
      expect(await k.exited).to.deep.equal({ code: 0, signal: null })
    }
    const code = block('security.md', 0, "import fs from 'node:fs'")
      .replace("allow: ['alice.pub']", `allow: [${JSON.stringify(path.join(cwd, 'alice.pub'))}]`)
      .replace('const key = (f) => fs.readFileSync(f,', `const key = (f) => fs.readFileSync(${JSON.stringify(cwd + '/')} + f,`)
    expect(code).to.include(cwd)
    expect(await program('security.js', code)).to.equal('5\n')
  })

  it('services: the three peers the guide starts, and the client routing by method, version and zone', async () => {
    const orders = file('orders.js', "export function getOrder ({ id }, ctx) { return { id, endpoint: ctx.endpoint } }\n")
    const billing = file('billing.js', "export function invoice ({ order }, ctx) { return { order, endpoint: ctx.endpoint } }\n")
    const a = await startPeer(['--handlers', orders, '--threads', '0', '--service-version', '2.1.0', '--labels', 'zone=a'], { demo: false })
    const b = await startPeer(['--handlers', billing, '--threads', '0', '--service-version', '1.4.0', '--labels', 'zone=a', '--seeds', a.endpoint], { demo: false })
    const c = await startPeer(['--handlers', `${orders},${billing}`, '--threads', '0', '--labels', 'zone=b', '--seeds', a.endpoint], { demo: false })
    const code = swap(block('services.md', 0, "const client = new Client({ seeds: ['tcp://127.0.0.1:5555'], zone: 'a' })"), { 'tcp://127.0.0.1:5555': a.endpoint })
      .replace("await client.request('invoice', { order: 7 })", "console.log((await client.request('invoice', { order: 7 })).endpoint)")
      .replace("await client.request('getOrder', { id: 7 }, { version: '^2' })", "console.log((await client.request('getOrder', { id: 7 }, { version: '^2' })).endpoint)")
      .replace("await client.request('getOrder', { id: 7 }, { where: { zone: 'b' } })", "console.log((await client.request('getOrder', { id: 7 }, { where: { zone: 'b' } })).endpoint)")
    const [invoiced, versioned, zoned] = (await program('services.js', `import { Client } from 'zeromesh'\n${code}`)).trim().split('\n')
    expect([b.endpoint, c.endpoint]).to.include(invoiced) // B or C
    expect(versioned).to.equal(a.endpoint) // the only 2.x
    expect(zoned).to.equal(c.endpoint) // the only zone b
  })

  it('streams: rows stop when the reader breaks, and a request stream sums its input', async () => {
    const prelude = [
      "import { Peer, Client } from 'zeromesh'",
      'const db = { row: async (id) => ({ id }) } // the user\'s own',
      'const done = (row) => { console.log(row.id); return row.id === 2 }',
    ].join('\n')
    expect(await program('streams.js', `${prelude}\n${block('streams.md', 0, '// peer: an async generator')}`)).to.equal('0\n1\n2\n6\n')
  })

  it('middleware: the peer\'s tenant check and the client\'s token, on one call', async () => {
    const prelude = [
      "import { Peer, Client } from 'zeromesh'",
      "const peer = new Peer({ handlers: { 'orders.get': ({ id }, ctx) => ({ id, tenant: ctx.headers['x-tenant'], rid: ctx.headers['x-request-id'] }) } })",
      'await peer.start()',
      'const client = new Client({ seeds: [peer.endpoint] })',
      "const tenants = new Map([['Bearer t0k3n', 'acme']])",
      "const token = 't0k3n'",
      "const rid = 'r-1'",
    ].join('\n')
    const code = block('middleware.md', 0, '// The peer: every request and stream')
      .replace("await client.request('orders.get', { id: 7 }, { headers: { 'x-request-id': rid } })", "console.log(JSON.stringify(await client.request('orders.get', { id: 7 }, { headers: { 'x-request-id': rid } })))")
    expect(await program('middleware.js', `${prelude}\n${code}`)).to.equal('{"id":7,"tenant":"acme","rid":"r-1"}\n')
  })

  it('deploying: a client middleware that sets a tenant header', async () => {
    const prelude = [
      "import { Peer, Client } from 'zeromesh'",
      "const peer = new Peer({ handlers: { tenant: (args, ctx) => ctx.headers['x-tenant'] } })",
      'await peer.start()',
      'const client = new Client({ seeds: [peer.endpoint] })',
      "const currentTenant = () => 'acme'",
    ].join('\n')
    expect(await program('deploying.js', `${prelude}\n${block('deploying.md', 0, 'client.use(')}\nconsole.log(await client.request('tenant', null))`)).to.equal('acme\n')
  })

  it('observing: a handler that continues the caller\'s trace runs on a peer, and the diagnostics channel reports a call', async () => {
    const resize = file('resize.js', `const work = async (args) => ({ resized: args.w }) // the user's own\n${block('observing.md', 1, "import { context, propagation, trace } from '@opentelemetry/api'")}`)
    const peer = await startPeer(['--handlers', resize, '--threads', '0'], { demo: false })
    const out = await program('observing.js', [
      block('observing.md', 2, "import diagnosticsChannel from 'node:diagnostics_channel'"),
      "const { Client } = await import('zeromesh')",
      `const client = new Client({ seeds: [${JSON.stringify(peer.endpoint)}] })`,
      "console.log(JSON.stringify(await client.request('resize', { w: 64 })))",
    ].join('\n'))
    const lines = out.trim().split('\n')
    expect(lines[0]).to.match(new RegExp(`^resize -> ${peer.endpoint.replaceAll('.', '\\.')}: \\d+\\.\\d ms, 1 attempt\\(s\\)$`))
    expect(lines[1]).to.equal('{"resized":64}')
  })
})
