// examples/events runs as its comments say, each service a `zeromesh peer --handlers` process:
// the order fan-out (orders publishes orders.placed from its handler in a worker thread; one
// instance of billing and one of shipping handle each order; a group with nobody left fails
// the order with its code), and cache invalidation by broadcast (every API instance drops the
// key, admin.js says which did, a frozen one is reported unreached).
import { expect } from 'chai'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startPeer, runScript, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { Client, RemoteError } from '../../index.js'
import { orders, billing, shipping } from '../../examples/events/contracts.js'
import { dropEverywhere } from '../../examples/events/admin.js'

const example = (f) => fileURLToPath(new URL(`../../examples/events/${f}`, import.meta.url))

describe('examples/events (processes)', function () {
  this.timeout(40000)
  const clients = []
  const client = (o) => { const c = new Client({ timeout: 5000, ...o }); clients.push(c); return c }
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()))
    await killAll()
  })

  it('order fan-out: each order is handled by one billing and one shipping instance; with no shipping left it fails NO_SUBSCRIBERS', async () => {
    const o = await startPeer(['--handlers', example('orders.js'), '--threads', '1'])
    const seeds = ['--seeds', o.endpoint]
    const service = (f) => startPeer(['--handlers', example(f), '--threads', '1', ...seeds])
    const [bills, ships] = await Promise.all([Promise.all([service('billing.js'), service('billing.js')]), Promise.all([service('shipping.js'), service('shipping.js')])])
    const c = client({ seeds: [o.endpoint] })
    const shop = c.proxy(orders)
    const ids = Array.from({ length: 20 }, (_, i) => `o-${i}`)
    const out = await Promise.all(ids.map((id) => shop.place({ id, total: 10 })))
    for (const r of out) expect(r.handledBy).to.deep.equal(['billing', 'shipping'])
    // What each instance handled, asked of it alone: every order once in each group.
    const handledBy = async (peers, contract) => {
      const lists = await Promise.all(peers.map((p) => client({ seeds: [p.endpoint], discover: false }).proxy(contract).handled(null)))
      for (const [i, l] of lists.entries()) expect(l.pid).to.equal(peers[i].pid)
      return lists.flatMap((l) => l.ids).sort()
    }
    expect(await handledBy(bills, billing)).to.deep.equal([...ids].sort())
    expect(await handledBy(ships, shipping)).to.deep.equal([...ids].sort())

    // Shipping gone: an order placed at once may have reached a shipping instance as it died
    // (no ack: a timeout); once the client of the order service knows them gone, the order
    // fails with the code that says why. Never a success.
    for (const s of ships) process.kill(s.pid, 'SIGKILL')
    const codes = []
    await eventually(async () => {
      let err = null
      try { await shop.place({ id: 'o-late', total: 10 }) } catch (e) { err = e }
      expect(err).to.be.instanceOf(RemoteError)
      codes.push(err.remoteCode)
      expect(err.remoteCode).to.equal('ERR_ZEROMESH_NO_SUBSCRIBERS')
    }, { timeout: 15000 })
    expect(codes.slice(0, -1).every((c) => c === 'ERR_ZEROMESH_TIMEOUT'), codes.join()).to.equal(true)
  })

  it('cache invalidation: a broadcast makes every API instance drop the key; admin.js lists each; a frozen one is unreached', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-prices-'))
    try {
      const file = path.join(dir, 'prices.json')
      writeFileSync(file, JSON.stringify({ 'sku-1': 10 }))
      const env = { PRICES_FILE: file }
      const a = await startPeer(['--handlers', example('cache.js'), '--threads', '0', '--labels', 'instance=a'], { env })
      const b = await startPeer(['--handlers', example('cache.js'), '--threads', '0', '--labels', 'instance=b', '--seeds', a.endpoint], { env })
      const d = await startPeer(['--handlers', example('cache.js'), '--threads', '0', '--labels', 'instance=c', '--seeds', a.endpoint], { env })
      const c = client({ seeds: [a.endpoint, b.endpoint, d.endpoint] })
      const price = (instance) => c.request('prices.get', { sku: 'sku-1' }, { where: { instance } })
      for (const i of ['a', 'b', 'c']) {
        expect(await price(i)).to.deep.equal({ sku: 'sku-1', price: 10, cached: false })
        expect(await price(i)).to.deep.equal({ sku: 'sku-1', price: 10, cached: true })
      }
      writeFileSync(file, JSON.stringify({ 'sku-1': 12 }))
      expect((await price('b')).price).to.equal(10) // still cached

      const out = await dropEverywhere(c, 'sku-1')
      expect(out.delivered.map((x) => x.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint, d.endpoint].sort())
      expect(out.failed.concat(out.unreached)).to.deep.equal([])
      for (const i of ['a', 'b', 'c']) expect(await price(i)).to.deep.equal({ sku: 'sku-1', price: 12, cached: false })

      // The script, as an operator runs it.
      const admin = runScript(example('admin.js'), ['sku-1'], { env: { ZEROMESH_SEEDS: a.endpoint } })
      expect((await admin.exited).code, admin.stderr).to.equal(0)
      expect(admin.stdout.split('\n').filter((l) => l.startsWith('dropped'))).to.have.length(3)

      // One instance frozen: reported unreached within the deadline; the others dropped it.
      process.kill(d.pid, 'SIGSTOP')
      const t0 = Date.now()
      const frozen = await dropEverywhere(c, 'sku-1', 1000)
      expect(Date.now() - t0).to.be.below(3000)
      expect(frozen.unreached.map((u) => u.endpoint)).to.deep.equal([d.endpoint])
      expect(frozen.delivered.map((x) => x.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
