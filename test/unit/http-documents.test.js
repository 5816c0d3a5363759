// zeromesh/http's OpenAPI 3.1 and AsyncAPI 3 documents (issue 77, items 1, 2 and 5), each
// checked by outside tools (test/helpers/api-docs.js: @seriousme/openapi-schema-validator and
// @asyncapi/parser), on the examples' contracts and the guides' (their ```js blocks, written
// out and imported), and on what they say of each method, event, group and error.
import { expect } from 'chai'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { z } from 'zod'
import { contract, implement, on } from '../../index.js'
import { openapiOf, asyncapiOf, httpStatusOfCode } from '../../http/index.js'
import { openapiErrors, asyncapiErrors } from '../helpers/api-docs.js'
import { primes } from '../../examples/express/contract.js'
import * as eventContracts from '../../examples/events/contracts.js'
import { orders as fixtureOrders } from '../../test/fixtures/orders-contract.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The ```js block of a guide that begins with `begins`. */
function guideBlock (page, begins) {
  const text = readFileSync(path.join(ROOT, 'docs/guides', page), 'utf8')
  const block = [...text.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1]).find((b) => b.trimStart().startsWith(begins))
  expect(block, `${page}: a block beginning ${begins}`).to.be.a('string')
  return block
}

const quiet = { onWarning: () => {} }

describe('zeromesh/http documents (OpenAPI 3.1, AsyncAPI 3)', () => {
  let dir
  let guides
  before(async () => {
    dir = mkdtempSync(path.join(fileURLToPath(new URL('.', import.meta.url)), 'http-docs-')) // inside the repository: 'zeromesh' and zod resolve
    const load = async (name, code) => { const p = path.join(dir, name); writeFileSync(p, code); return import(pathToFileURL(p).href) }
    guides = {
      contracts: await load('orders-contract.js', guideBlock('contracts.md', '// orders-contract.js')),
      http: await load('contract.js', guideBlock('http-api.md', '// contract.js')),
    }
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('the examples\' and the guides\' contracts make documents both outside validators accept', async () => {
    const sets = {
      'examples/express': [primes],
      'examples/events': Object.values(eventContracts),
      'the contracts guide': [guides.contracts.orders],
      'the HTTP guide': [guides.http.primes],
      'the test fixture (a stream)': [fixtureOrders],
      'all of them, and a route of a method without a contract': [primes, ...Object.values(eventContracts), fixtureOrders],
    }
    for (const [name, contracts] of Object.entries(sets)) {
      const api = openapiOf(contracts, { routes: { 'GET /': 'countdown' }, ...quiet })
      expect(await openapiErrors(api), `${name}: OpenAPI`).to.deep.equal([])
      expect(await openapiErrors(openapiOf(contracts, { problemJson: true, ...quiet })), `${name}: OpenAPI with problem+json`).to.deep.equal([])
      expect(await asyncapiErrors(asyncapiOf(contracts, quiet)), `${name}: AsyncAPI`).to.deep.equal([])
    }
  })

  it('one operation per method: POST /{contract}/{method}, operationId contract.method, tagged by contract, info.version the contract\'s', () => {
    const doc = openapiOf([fixtureOrders])
    expect(doc.openapi).to.match(/^3\.1\./)
    expect(doc.jsonSchemaDialect).to.equal('https://json-schema.org/draft/2020-12/schema')
    expect(doc.info.version).to.equal('1.0.0')
    expect(Object.keys(doc.paths).sort()).to.deep.equal(['/orders/get', '/orders/liar', '/orders/list', '/orders/ran'])
    const get = doc.paths['/orders/get'].post
    expect(get.operationId).to.equal('orders.get')
    expect(get.tags).to.deep.equal(['orders'])
    expect(doc.tags).to.deep.equal([{ name: 'orders', description: 'contract orders, version 1.0.0' }])
    // The input and output as the schema library made them (JSON Schema 2020-12), by reference.
    expect(get.requestBody.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/orders.get.input' })
    const input = doc.components.schemas['orders.get.input']
    expect(input).to.not.have.property('$schema') // the document names the dialect once
    expect(input.properties.id).to.deep.equal({ type: 'string', minLength: 1 })
    expect(input.required).to.include('id')
    // A stream answers server-sent events, its item schema beside them.
    const list = doc.paths['/orders/list'].post.responses[200].content['text/event-stream']
    expect(list['x-zeromesh-item']).to.deep.equal({ $ref: '#/components/schemas/orders.list.output' })
  })

  it('every error is one shared schema of the { error, code, issues } body, at each status of the code -> HTTP map; problem+json only when asked', () => {
    const doc = openapiOf([primes])
    const statuses = [...new Set([...Object.values(httpStatusOfCode), 500])].map(String).sort()
    const op = doc.paths['/primes/count'].post
    expect(Object.keys(op.responses).sort()).to.deep.equal(['200', ...statuses].sort())
    for (const s of statuses) {
      expect(op.responses[s]).to.deep.equal({ $ref: `#/components/responses/${s}` })
      expect(doc.components.responses[s].content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/ZeromeshError' })
    }
    expect(doc.components.responses[503].headers).to.have.property('Retry-After')
    expect(doc.components.responses[400].description).to.include('ERR_ZEROMESH_INVALID_INPUT')
    expect(doc.components.schemas.ZeromeshError.required).to.deep.equal(['error', 'code'])
    expect(Object.keys(doc.components.schemas.ZeromeshError.properties)).to.deep.equal(['error', 'code', 'issues'])
    const problem = openapiOf([primes], { problemJson: true })
    expect(problem.components.responses[400].content['application/problem+json'].schema).to.deep.equal({ $ref: '#/components/schemas/ZeromeshProblem' })
    expect(problem.components.schemas).to.not.have.property('ZeromeshError')
  })

  it('a schema\'s own references ($defs, a recursive one) resolve where the schema lands in the document', async () => {
    const Node = z.object({ name: z.string(), get children () { return z.array(Node) } })
    const tree = contract('tree', { version: '2.0.0', methods: { walk: { input: Node, output: z.object({ count: z.number() }) } } })
    const doc = openapiOf([tree])
    const text = JSON.stringify(doc.components.schemas['tree.walk.input'])
    const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1])
    expect(refs.length).to.be.greaterThan(0)
    for (const r of refs) expect(r.startsWith('#/components/schemas/tree.walk.input'), r).to.equal(true)
    expect(await openapiErrors(doc)).to.deep.equal([]) // the validator resolves every $ref
  })

  it('a route mapped per operation: GET / to a method without a contract, and a contract\'s method at a path of its own with its input from the query', async () => {
    const doc = openapiOf([primes], { routes: { 'GET /': 'countdown', 'GET /primes': { method: 'primes.count', idempotent: true } }, ...quiet })
    expect(Object.keys(doc.paths).sort()).to.deep.equal(['/', '/primes']) // a mapped method leaves its default route
    expect(doc.paths['/'].get.operationId).to.equal('countdown')
    expect(doc.components.schemas['countdown.input']).to.deep.equal({}) // no contract: open
    const q = doc.paths['/primes'].get
    expect(q.operationId).to.equal('primes.count')
    expect(q).to.not.have.property('requestBody')
    expect(q.parameters.filter((p) => p.in === 'query')).to.deep.equal([{ name: 'limit', in: 'query', required: true, schema: { $ref: '#/components/schemas/primes.count.input/properties/limit' } }])
    expect(await openapiErrors(doc)).to.deep.equal([])
    expect(() => openapiOf([primes], { routes: { 'FETCH /': 'x' } })).to.throw(/VERB \/path/)
    expect(() => openapiOf([primes], { routes: { 'GET /a/{id}': 'x' } })).to.throw(/no path parameters/)
    expect(() => openapiOf([primes], { nope: 1 })).to.throw(/unknown option "nope"/)
  })

  it('a schema with no Standard JSON Schema: an open schema and a warning naming its vendor; with strict, an error naming it', async () => {
    const handmade = { '~standard': { version: 1, vendor: 'handmade', validate: (v) => ({ value: v }) } }
    const c = contract('legacy', { methods: { run: { input: handmade, output: z.object({ ok: z.boolean() }) } } })
    const warnings = []
    const doc = openapiOf([c], { onWarning: (m) => warnings.push(m) })
    expect(doc.components.schemas['legacy.run.input']).to.deep.equal({})
    expect(doc.components.schemas['legacy.run.output'].properties.ok).to.deep.equal({ type: 'boolean' })
    expect(warnings).to.have.length(1)
    expect(warnings[0]).to.include('legacy: run.input').and.include('"handmade"').and.include('open schema')
    expect(await openapiErrors(doc)).to.deep.equal([])
    expect(() => openapiOf([c], { strict: true })).to.throw(/legacy: run.input has no JSON Schema: its vendor "handmade" gives no Standard JSON Schema/)
    // A schema its library cannot express in JSON Schema (a transform's output) says so, naming the vendor.
    const t = contract('t', { methods: { m: { input: z.string(), output: z.string().transform((s) => s.length) } } })
    expect(() => openapiOf([t], { strict: true })).to.throw(/t: m.output has no JSON Schema: its vendor "zod" cannot express it/)
  })

  it('AsyncAPI: each event a channel with its contract\'s payload, each subscribing group a receive operation, each publishing contract a send', async () => {
    const { orders, billing, shipping } = eventContracts
    const handled = () => ({ pid: 1, ids: [] })
    const sources = [
      orders,
      implement(billing, { handled }, { events: [on(orders, 'placed', () => {})] }),
      implement(shipping, { handled }, { events: [on(orders, 'placed', () => {})] }),
      on(orders, 'placed', () => {}, { group: 'audit' }),
    ]
    const doc = asyncapiOf(sources)
    expect(await asyncapiErrors(doc)).to.deep.equal([])
    expect(Object.keys(doc.channels)).to.deep.equal(['orders_placed'])
    expect(doc.channels.orders_placed.address).to.equal('orders.placed')
    expect(doc.components.schemas['orders.placed'].properties.total).to.deep.equal({ type: 'number', exclusiveMinimum: 0 })
    const ops = Object.values(doc.operations)
    expect(ops.filter((o) => o.action === 'receive').map((o) => o['x-zeromesh-group']).sort()).to.deep.equal(['audit', 'billing', 'shipping'])
    expect(ops.filter((o) => o.action === 'send').map((o) => o.title)).to.deep.equal(['orders publishes orders.placed'])
    for (const o of ops) expect(o.channel).to.deep.equal({ $ref: '#/channels/orders_placed' })
  })

  it('from service descriptors (what peers state): plain methods and streams, subscriptions with no contract, the highest of two versions with a warning, durable where stated', async () => {
    const api = openapiOf(fixtureOrders)
    const stated = {
      name: 'orders',
      version: '1.0.0',
      methods: Object.entries(api.components.schemas).filter(([k]) => k.startsWith('orders.') && k.endsWith('.input')).map(([k, input]) => {
        const method = k.split('.')[1]
        return { name: `orders.${method}`, method, stream: method === 'list', input, output: method === 'ran' ? null : {} }
      }),
      events: [],
    }
    const a = { methods: ['orders.get', 'orders.list', 'orders.ran', 'orders.liar', 'echo', 'count'], contracts: [stated], events: [{ event: 'cache.drop', group: 'cache.drop' }], streams: ['orders.list', 'count'] }
    const b = { methods: ['orders.get'], contracts: [{ ...stated, version: '1.2.0', methods: stated.methods.slice(0, 1) }], events: [{ event: 'jobs.done', group: 'workers', durable: true }], streams: [] }
    const warnings = []
    const doc = openapiOf([a, b], { onWarning: (m) => warnings.push(m) })
    expect(doc.info.version).to.equal('1.2.0')
    expect(warnings.some((w) => w.includes('versions 1.0.0 and 1.2.0: described at 1.2.0'))).to.equal(true)
    expect(Object.keys(doc.paths).sort()).to.deep.equal(['/count', '/echo', '/orders/get'])
    expect(doc.paths['/count'].post.responses[200].content).to.have.property('text/event-stream')
    expect(doc.paths['/echo'].post).to.not.have.property('tags')
    expect(await openapiErrors(doc)).to.deep.equal([])
    const events = asyncapiOf([a, b], quiet)
    expect(await asyncapiErrors(events)).to.deep.equal([])
    const durable = Object.values(events.operations).find((o) => o['x-zeromesh-group'] === 'workers')
    expect(durable['x-zeromesh-durable']).to.equal(true)
    expect(Object.values(events.operations).find((o) => o['x-zeromesh-group'] === 'cache.drop')).to.not.have.property('x-zeromesh-durable')
    expect(() => openapiOf([42])).to.throw(/describe a Client, or contracts/)
  })
})
