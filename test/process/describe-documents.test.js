// The mesh describes itself from the command line (issue 77, items 4 and 5): `zeromesh
// describe --openapi` and `--asyncapi` against a live mesh of peer processes running the
// examples' handler modules (examples/events: orders publishes orders.placed, billing and
// shipping subscribe in groups of their own) beside a peer of plain demo handlers, and a
// peer's own documents at /openapi.json and /asyncapi.json of its --http. Every document goes
// through the outside validators (test/helpers/api-docs.js).
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { startPeer, run, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { openapiErrors, asyncapiErrors } from '../helpers/api-docs.js'

const example = (f) => fileURLToPath(new URL(`../../examples/events/${f}`, import.meta.url))
const CONTRACT_HANDLERS = fileURLToPath(new URL('../fixtures/orders-handlers.js', import.meta.url))

/** Runs `zeromesh describe ARGS` to its end: its stdout as JSON, and its stderr. */
async function describeDoc (args) {
  const c = run(['describe', ...args])
  const { code } = await c.exited
  expect(code, c.stderr).to.equal(0)
  return { doc: JSON.parse(c.stdout), stderr: c.stderr }
}

describe('zeromesh describe --openapi / --asyncapi, and a peer\'s own documents (processes)', function () {
  this.timeout(60000)
  afterEach(() => killAll())

  it('prints the documents of a live mesh: every member\'s methods and events, which the outside validators accept', async () => {
    const o = await startPeer(['--handlers', example('orders.js'), '--threads', '1'])
    const seeds = ['--seeds', o.endpoint]
    await Promise.all([
      startPeer(['--handlers', example('billing.js'), '--threads', '1', ...seeds]),
      startPeer(['--handlers', example('shipping.js'), '--threads', '1', ...seeds]),
      startPeer([...seeds]), // the demo handlers: methods without a contract, count a stream
    ])
    // Once the seed's list names all four and each said what it serves.
    const api = await eventually(async () => {
      const { doc } = await describeDoc(['--seeds', o.endpoint, '--openapi'])
      expect(Object.keys(doc.paths)).to.include.members(['/orders/place', '/billing/handled', '/shipping/handled', '/echo'])
      return doc
    }, { timeout: 20000, interval: 200 })
    expect(await openapiErrors(api)).to.deep.equal([])
    expect(api.paths['/orders/place'].post.operationId).to.equal('orders.place')
    expect(api.components.schemas['orders.place.input'].properties.total).to.deep.equal({ type: 'number', exclusiveMinimum: 0 })
    expect(api.paths['/count'].post.responses[200].content).to.have.property('text/event-stream')
    const { doc: events } = await describeDoc(['--seeds', o.endpoint, '--asyncapi'])
    expect(await asyncapiErrors(events)).to.deep.equal([])
    expect(events.channels.orders_placed.address).to.equal('orders.placed')
    expect(events.components.schemas['orders.placed'].required).to.deep.equal(['id', 'total'])
    const groups = Object.values(events.operations).filter((x) => x.action === 'receive' && x.channel.$ref === '#/channels/orders_placed').map((x) => x['x-zeromesh-group']).sort()
    expect(groups).to.deep.equal(['billing', 'shipping'])
    const both = run(['describe', '--seeds', o.endpoint, '--openapi', '--asyncapi'])
    expect((await both.exited).code).to.equal(2)
    expect(both.stderr).to.include('give one')
  })

  it('a peer with --http serves its own /openapi.json and /asyncapi.json', async () => {
    const p = await startPeer(['--handlers', CONTRACT_HANDLERS, '--threads', '1', '--http', '0'])
    const line = await eventually(() => {
      const l = p.stderr.split('\n').filter(Boolean).map((x) => JSON.parse(x)).find((x) => x.http !== undefined)
      expect(l).to.not.equal(undefined)
      return l
    })
    const api = await eventually(async () => {
      const r = await fetch(`http://${line.http}/openapi.json`)
      expect(r.status).to.equal(200)
      expect(r.headers.get('content-type')).to.equal('application/json')
      const doc = await r.json()
      expect(Object.keys(doc.paths)).to.include('/orders/get') // once its thread said what the contract is
      return doc
    })
    expect(await openapiErrors(api)).to.deep.equal([])
    expect(api.info.version).to.equal('1.0.0')
    expect(api.paths['/orders/list'].post.responses[200].content).to.have.property('text/event-stream')
    const r = await fetch(`http://${line.http}/asyncapi.json`)
    expect(r.status).to.equal(200)
    expect(await asyncapiErrors(await r.json())).to.deep.equal([])
    expect((await fetch(`http://${line.http}/nope`)).status).to.equal(404)
  })
})
