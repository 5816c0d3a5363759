// Contracts across processes: `zeromesh peer --handlers` with a module whose default export is
// implement()'s, its handlers in a worker thread (the contract checks run there; the main
// thread states the contracts), a client's typed service, and `zeromesh describe`.
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { startPeer, run, killAll } from '../helpers/processes.js'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { orders } from '../fixtures/orders-contract.js'
import { InvalidInputError } from '../../index.js'

const HANDLERS = fileURLToPath(new URL('../fixtures/orders-handlers.js', import.meta.url))

describe('contracts across processes', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  it('a peer process runs a contract module in a thread: typed calls, coerced inputs, refusals that never run the handler (streams too), output checked', async () => {
    const p = await startPeer(['--handlers', HANDLERS, '--threads', '1'])
    const c = h.client({ seeds: [p.endpoint] })
    await c.waitFor('orders.get')
    const svc = c.proxy(orders)
    expect(await svc.get({ id: 'a', qty: '2' })).to.deep.equal({ id: 'a', qty: 2, total: 20 })
    const items = []
    for await (const x of svc.list({ n: 3 })) items.push(x.i)
    expect(items).to.deep.equal([0, 1, 2])
    // Refused in the thread, for callers that do not check.
    const err = await rejectsWith(c.request('orders.get', { id: '', qty: -1 }), 'ERR_ZEROMESH_INVALID_INPUT')
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(err.issues.map((i) => i.path)).to.deep.equal([['id'], ['qty']])
    let serr = null
    try { for await (const x of c.stream('orders.list', { n: -1 })) items.push(x) } catch (e) { serr = e }
    expect(serr).to.be.instanceOf(InvalidInputError)
    expect(await svc.ran(null)).to.deep.equal({ get: 1, list: 1 })
    const liar = await rejectsWith(svc.liar({ lie: true }), 'ERR_ZEROMESH_REMOTE')
    expect(liar.remoteCode).to.equal('ERR_ZEROMESH_INVALID_OUTPUT')
    expect(await svc.liar({ lie: false })).to.deep.equal({ ok: true })
  })

  it('zeromesh describe prints the services with their contracts and JSON Schemas; --json gives them as data', async () => {
    const a = await startPeer(['--handlers', HANDLERS, '--threads', '1'])
    const b = await startPeer(['--handlers', HANDLERS, '--threads', '1', '--seeds', a.endpoint])
    const json = run(['describe', '--seeds', a.endpoint, '--json'])
    expect((await json.exited).code, json.stderr).to.equal(0)
    const list = JSON.parse(json.stdout)
    // The two peers say the same: one service, two endpoints (once b's join reached a's list).
    const orders = list.find((s) => s.contracts?.[0]?.name === 'orders')
    expect(orders.endpoints).to.include(a.endpoint)
    expect(orders.contracts[0].version).to.equal('1.0.0')
    expect(orders.contracts[0].methods.map((m) => [m.name, m.stream])).to.deep.equal([['orders.get', false], ['orders.liar', false], ['orders.list', true], ['orders.ran', false]])
    expect(orders.contracts[0].methods[0].input.properties.id).to.deep.equal({ type: 'string', minLength: 1 })
    const text = run(['describe', '--seeds', a.endpoint])
    expect((await text.exited).code, text.stderr).to.equal(0)
    expect(text.stdout).to.include('contract orders 1.0.0')
    expect(text.stdout).to.include('orders.list (stream)')
    expect(text.stdout).to.match(/input: +{"\$schema":"https:\/\/json-schema.org\/draft\/2020-12\/schema","type":"object"/)
    void b
  })

  it('a contract module that lacks a handler for a method of its contract stops the peer at start, naming it', async () => {
    const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const path = await import('node:path')
    const dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-contract-'))
    try {
      const file = path.join(dir, 'partial.mjs')
      writeFileSync(file, `import { implement } from ${JSON.stringify(new URL('../../index.js', import.meta.url).href)}\nimport { orders } from ${JSON.stringify(new URL('../fixtures/orders-contract.js', import.meta.url).href)}\nexport default implement(orders, { get: (x) => x })\n`)
      let err = null
      try { await startPeer(['--handlers', file, '--threads', '1']) } catch (e) { err = e }
      expect(err?.message).to.include('the contract\'s method list has no handler')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
