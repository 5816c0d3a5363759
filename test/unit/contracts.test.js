// Contracts without sockets: contract() and implement() (runtime/contract.js,
// peer/implement.js), the issues a refusal carries (protocol/issues.js), the contracts
// element of a service answer and its limits (protocol/contracts.js), and the client's typed
// proxy (client/contract-proxy.js) on a stand-in for the client's calls.
import { expect } from 'chai'
import { z } from 'zod'
import { contract, implement, InvalidInputError, InvalidArgumentError, ZeromeshError } from '../../index.js'
import { METHOD } from '../../runtime/contract.js'
import { wireIssues, readIssues, remoteValue } from '../../protocol/issues.js'
import { contractsElement, contractsDigest, readContracts } from '../../protocol/contracts.js'
import { contractProxy } from '../../client/contract-proxy.js'
import { Limits } from '../../protocol/constants.js'
import { packr } from '../../protocol/msgpack.js'

const orders = contract('orders', {
  version: '1.2.0',
  methods: {
    get: { input: z.object({ id: z.string(), qty: z.coerce.number().default(1) }), output: z.object({ id: z.string(), qty: z.number() }) },
    list: { input: z.object({ n: z.number().max(5) }), output: z.object({ i: z.number() }), stream: true },
  },
})

// A Standard Schema of its own, asynchronous: a validator library that checks with a promise.
const asyncPositive = {
  '~standard': { version: 1, vendor: 'test', validate: async (v) => (typeof v === 'number' && v > 0 ? { value: v } : { issues: [{ message: 'must be positive', path: [{ key: 'n' }] }] }) },
}
const throws = (fn) => { try { fn() } catch (err) { return err } throw new Error('did not throw') }
const rejects = async (p) => { try { await p } catch (err) { return err } throw new Error('did not reject') }
const drain = async (it) => { const out = []; for await (const x of it) out.push(x); return out }

describe('contract()', () => {
  it('names each method name.method and freezes what it was given', () => {
    expect(orders.name).to.equal('orders')
    expect(orders.version).to.equal('1.2.0')
    expect(orders.methods.get.wire).to.equal('orders.get')
    expect(orders.methods.list.stream).to.equal(true)
    expect(orders.methods.get.stream).to.equal(false)
    expect(Object.isFrozen(orders.methods)).to.equal(true)
  })

  it('refuses, with what to write instead: a dotted or empty name, a bad version, no methods, a schema that is not Standard Schema, a stream flag that is not boolean', () => {
    const s = z.string()
    const cases = [
      () => contract('or.ders', { methods: { get: { input: s, output: s } } }),
      () => contract('', { methods: { get: { input: s, output: s } } }),
      () => contract('orders', { version: 'one', methods: { get: { input: s, output: s } } }),
      () => contract('orders', { methods: {} }),
      () => contract('orders', { methods: { 'a.b': { input: s, output: s } } }),
      () => contract('orders', { methods: { get: { input: { parse () {} }, output: s } } }),
      () => contract('orders', { methods: { get: { input: s } } }),
      () => contract('orders', { methods: { get: { input: s, output: s, stream: 'yes' } } }),
    ]
    for (const c of cases) {
      const err = throws(c)
      expect(err).to.be.instanceOf(InvalidArgumentError)
      expect(err.message).to.match(/^zeromesh: contract\(/)
    }
  })
})

describe('implement()', () => {
  it('a method the contract names and the handlers lack, or one it does not name, is an error naming it', () => {
    const missing = throws(() => implement(orders, { get: (x) => x }))
    expect(missing).to.be.instanceOf(InvalidArgumentError)
    expect(missing.message).to.include('list has no handler')
    const extra = throws(() => implement(orders, { get: (x) => x, async * list () {}, gett: (x) => x }))
    expect(extra.message).to.include('gett is not a method of the contract')
    expect(throws(() => implement({ name: 'orders', methods: {} }, {})).message).to.include('made by contract(')
  })

  it('checks the input before the handler runs: a bad one throws InvalidInputError with its issues and the handler never runs; a good one reaches it as the schema\'s output', async () => {
    const seen = []
    const h = implement(orders, { get: (input) => { seen.push(input); return input }, async * list () {} })
    expect(Object.keys(h)).to.deep.equal(['orders.get', 'orders.list'])
    const err = throws(() => h['orders.get']({ id: 5 }, {}))
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(err.code).to.equal('ERR_ZEROMESH_INVALID_INPUT')
    expect(err.retryable).to.equal(false)
    expect(err.issues).to.deep.equal([{ path: ['id'], message: 'Invalid input: expected string, received number' }])
    expect(err.message).to.equal('invalid input for orders.get: id: Invalid input: expected string, received number')
    expect(seen).to.deep.equal([])
    expect(h['orders.get']({ id: 'a', qty: '3' }, {})).to.deep.equal({ id: 'a', qty: 3 }) // coerced
    expect(h['orders.get']({ id: 'b' }, {})).to.deep.equal({ id: 'b', qty: 1 }) //           defaulted
    expect(seen).to.have.length(2)
  })

  it('an asynchronous schema is awaited; the issues never carry the offending value', async () => {
    const c = contract('calc', { methods: { sq: { input: asyncPositive, output: asyncPositive } } })
    let runs = 0
    const h = implement(c, { sq: (n) => { runs++; return n * n } })
    expect(await h['calc.sq'](3, {})).to.equal(9)
    const err = await rejects(h['calc.sq']('secret-value-77', {}))
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(err.issues).to.deep.equal([{ path: ['n'], message: 'must be positive' }])
    expect(JSON.stringify(remoteValue(err))).to.not.include('secret-value-77')
    expect(runs).to.equal(1)
  })

  it('a stream method checks its input before its first item, and hands the handler the schema\'s output', async () => {
    const h = implement(orders, { get: (x) => x, async * list ({ n }) { for (let i = 0; i < n; i++) yield { i } } })
    expect(await drain(h['orders.list']({ n: 3 }, {}))).to.deep.equal([{ i: 0 }, { i: 1 }, { i: 2 }])
    const err = await rejects(drain(h['orders.list']({ n: 50 }, {})))
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(err.issues[0].path).to.deep.equal(['n'])
  })

  it('validateOutput (off by default) checks each result and each item: a wrong one fails with ERR_ZEROMESH_INVALID_OUTPUT and its issues', async () => {
    const liar = { get: ({ id }) => ({ id, qty: 'many' }), async * list () { yield { i: 'x' } } }
    expect(implement(orders, liar)['orders.get']({ id: 'a' }, {})).to.deep.equal({ id: 'a', qty: 'many' })
    const h = implement(orders, liar, { validateOutput: true })
    const err = throws(() => h['orders.get']({ id: 'a' }, {}))
    expect(err).to.be.instanceOf(ZeromeshError)
    expect(err.code).to.equal('ERR_ZEROMESH_INVALID_OUTPUT')
    expect(err.issues[0].path).to.deep.equal(['qty'])
    expect(remoteValue(err)[2]).to.deep.equal([[err.issues[0].message, ['qty']]])
    const serr = await rejects(drain(h['orders.list']({ n: 1 }, {})))
    expect(serr.code).to.equal('ERR_ZEROMESH_INVALID_OUTPUT')
    expect(throws(() => implement(orders, liar, { validateOutput: 'yes' }))).to.be.instanceOf(InvalidArgumentError)
  })

  it('each handler carries its method\'s description: JSON Schemas where the schema gives one', () => {
    const h = implement(orders, { get: (x) => x, async * list () {} })
    const d = h['orders.get'][METHOD]
    expect(d).to.include({ contract: 'orders', version: '1.2.0', method: 'get', stream: false })
    expect(d.input).to.include({ type: 'object' })
    expect(d.input.properties.id).to.deep.equal({ type: 'string' })
    const c = contract('calc', { methods: { sq: { input: asyncPositive, output: asyncPositive } } })
    expect(implement(c, { sq: (n) => n })['calc.sq'][METHOD].input).to.equal(null) // no JSON Schema to give
    // Spread together, several implementations keep every method and its description.
    const both = { ...h, ...implement(c, { sq: (n) => n }) }
    expect(Object.keys(both).sort()).to.deep.equal(['calc.sq', 'orders.get', 'orders.list'])
    expect(both['orders.list'][METHOD].stream).to.equal(true)
  })
})

describe('issues on the wire (PROTOCOL.md 4.2.2)', () => {
  it('are cut to the limits by the sender: 32 issues, 512-character messages, 32-segment paths of 128-character keys; keys of { key } and symbols as strings', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ message: 'm'.repeat(600), path: [...Array.from({ length: 40 }, () => 'k'.repeat(200)), i] }))
    const w = wireIssues(many)
    expect(w).to.have.length(Limits.maxIssues)
    expect(w[0][0]).to.have.length(Limits.maxIssueMessageLength)
    expect(w[0][1]).to.have.length(Limits.maxIssuePathLength)
    expect(w[0][1][0]).to.have.length(Limits.maxIssueSegmentLength)
    expect(readIssues(w)).to.have.length(32) // what a sender cuts, a receiver takes
    expect(wireIssues([{ message: 'x', path: [{ key: 'a' }, 2, Symbol('s'), -1] }])).to.deep.equal([['x', ['a', 2, 's', '-1']]])
    expect(wireIssues([{ message: 'no path' }])).to.deep.equal([['no path', []]])
  })

  it('a receiver reads malformed issues, or issues past a limit, as none', () => {
    for (const bad of [
      'x', [['m']], [[1, []]], [['m', 'path']], [['m', [-1]]], [['m', [1.5]]], [['m', [{}]]],
      Array.from({ length: 33 }, () => ['m', []]),
      [['m'.repeat(513), []]],
      [['m', Array.from({ length: 33 }, () => 'a')]],
      [['m', ['k'.repeat(129)]]],
    ]) expect(readIssues(bad), JSON.stringify(bad).slice(0, 60)).to.equal(null)
    expect(readIssues([['m', ['a', 0]]])).to.deep.equal([{ path: ['a', 0], message: 'm' }])
  })

  it('ride only with a refused input or output: any other error is [message, code] as before', () => {
    expect(remoteValue(Object.assign(new Error('x'), { code: 'E_X', issues: [{ message: 'm' }] }))).to.deep.equal(['x', 'E_X'])
    expect(remoteValue(new InvalidInputError('bad', { issues: [{ path: ['a'], message: 'm' }] }))).to.deep.equal(['bad', 'ERR_ZEROMESH_INVALID_INPUT', [['m', ['a']]]])
  })
})

describe('the contracts of a service answer (PROTOCOL.md 4.8.1)', () => {
  const described = (impl) => Object.values(impl).map((f) => f[METHOD])
  const impl = implement(orders, { get: (x) => x, async * list () {} })

  it('are grouped by contract, in name order, and read back as a receiver reads them', () => {
    const c = contract('alpha', { methods: { z: { input: z.null(), output: z.null() }, a: { input: z.null(), output: z.null() } } })
    const { element, dropped } = contractsElement([...described(impl), ...described(implement(c, { z: () => null, a: () => null }))])
    expect(dropped).to.equal(0)
    expect(element.map((x) => x[0])).to.deep.equal(['alpha', 'orders'])
    expect(element[0][2].map((m) => m[0])).to.deep.equal(['a', 'z'])
    const read = readContracts(element)
    expect(read[1]).to.include({ name: 'orders', version: '1.2.0' })
    expect(read[1].methods.map((m) => [m.name, m.stream])).to.deep.equal([['orders.get', false], ['orders.list', true]])
    expect(contractsElement([])).to.equal(null)
  })

  it('a change of a schema changes the digest its label states', () => {
    const changed = contract('orders', { version: '1.2.0', methods: { get: { input: z.object({ id: z.number() }), output: orders.methods.get.output }, list: orders.methods.list } })
    const a = contractsDigest(contractsElement(described(impl)).element)
    const b = contractsDigest(contractsElement(described(implement(changed, { get: (x) => x, async * list () {} }))).element)
    expect(a).to.match(/^[0-9a-f]{8}$/)
    expect(b).to.not.equal(a)
    expect(contractsDigest(contractsElement(described(impl)).element)).to.equal(a) // the same contract, the same digest
  })

  it('a schema over 64 KiB packed is left out, and every schema when the element would pass 256 KiB', () => {
    const big = (n) => ({ enum: Array.from({ length: n }, (_, i) => `value-${i}-${'x'.repeat(20)}`) })
    const one = { contract: 'c', version: null, method: 'huge', stream: false, input: big(3000), output: { type: 'null' } }
    expect(packr.pack(one.input).length).to.be.above(Limits.maxSchemaBytes)
    const r = contractsElement([one])
    expect(r.dropped).to.equal(1)
    expect(r.element[0][2][0][2]).to.equal(null)
    expect(r.element[0][2][0][3]).to.deep.equal({ type: 'null' })
    const fives = Array.from({ length: 6 }, (_, i) => ({ contract: 'c', version: null, method: `m${i}`, stream: false, input: big(1500), output: big(1500) }))
    expect(packr.pack(fives[0].input).length).to.be.below(Limits.maxSchemaBytes)
    const all = contractsElement(fives)
    expect(all.dropped).to.equal(12)
    expect(all.element[0][2].every((m) => m[2] === null && m[3] === null)).to.equal(true)
    expect(packr.pack(all.element).length).to.be.below(Limits.maxContractsBytes)
  })

  it('a malformed element is read as none', () => {
    for (const bad of ['x', [['n']], [['n', 1, []]], [['n', null, [['m', 'yes', null, null]]]], [['n', null, [['m', true, 'schema', null]]]]]) {
      expect(readContracts(bad), JSON.stringify(bad)).to.equal(null)
    }
  })
})

describe('client.proxy(contract)', () => {
  function calls () {
    const sent = []
    return {
      sent,
      request: async (method, args, options) => { sent.push({ method, args, options }); return method === 'orders.get' ? { id: args.id, qty: 2 } : null },
      stream: async function * (method, args) { sent.push({ method, args }); for (let i = 0; i < args.n; i++) yield { i } },
    }
  }

  it('checks the input before sending: a bad one rejects with InvalidInputError and nothing is sent; a good one is sent as given, with the options', async () => {
    const c = calls()
    const svc = contractProxy(orders, c)
    const err = await rejects(svc.get({ id: 1 }))
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(c.sent).to.deep.equal([])
    expect(await svc.get({ id: 'a', qty: '2' }, { timeout: 50 })).to.deep.equal({ id: 'a', qty: 2 })
    expect(c.sent).to.deep.equal([{ method: 'orders.get', args: { id: 'a', qty: '2' }, options: { timeout: 50 } }]) // the original input: the peer checks it again
    const serr = await rejects(drain(svc.list({ n: 9 })))
    expect(serr).to.be.instanceOf(InvalidInputError)
    expect(c.sent).to.have.length(1)
    expect(await drain(svc.list({ n: 2 }))).to.deep.equal([{ i: 0 }, { i: 1 }])
  })

  it('validateInput false sends as it is; validateOutput checks results', async () => {
    const c = calls()
    const loose = contractProxy(orders, c, { validateInput: false })
    await loose.get({ id: 1 })
    expect(c.sent).to.have.length(1)
    const strict = contractProxy(orders, { ...c, request: async () => ({ id: 'a', qty: 'x' }) }, { validateOutput: true })
    expect((await rejects(strict.get({ id: 'a' }))).code).to.equal('ERR_ZEROMESH_INVALID_OUTPUT')
    expect(throws(() => contractProxy({}, c))).to.be.instanceOf(InvalidArgumentError)
  })
})
