// Contracts across real sockets in one process (docs/guides/contracts.md): a Peer given
// implement()'s handlers, a Client's typed service, refusals that never run the handler
// (checked in the client, and at the peer for a caller that does not check), streams, the
// contracts a peer states and how clients that know nothing of them read all of it.
import { expect } from 'chai'
import { z } from 'zod'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { rawAsker } from '../helpers/raw.js'
import { eventually } from '../helpers/eventually.js'
import { contract, implement, InvalidInputError, RemoteError } from '../../index.js'
import { MessageType, Status, encodeRequest, encodeServiceGet } from '../../protocol/index.js'
import { serviceDigest } from '../../protocol/service.js'
import { capturingWarnings } from '../helpers/warnings.js'

const orders = contract('orders', {
  version: '1.0.0',
  methods: {
    get: { input: z.object({ id: z.string(), qty: z.coerce.number().int().positive().default(1) }), output: z.object({ id: z.string(), qty: z.number() }) },
    list: { input: z.object({ n: z.number().int().max(100) }), output: z.object({ i: z.number() }), stream: true },
  },
})

function ordersPeer () {
  const ran = { get: 0, list: 0 }
  const handlers = implement(orders, {
    get: ({ id, qty }) => { ran.get++; return { id, qty } },
    async * list ({ n }) { ran.list++; for (let i = 0; i < n; i++) yield { i } },
  })
  return { ran, handlers }
}

describe('contracts (in-process peers, real sockets)', function () {
  this.timeout(20000)
  const h = harness()
  const rawPeer = rawAsker()
  afterEach(async () => {
    rawPeer.close()
    await h.cleanup()
  })


  it('client.service(contract), the name before 0.3.0, is client.proxy(contract) with one DeprecationWarning', async () => {
    const { handlers } = ordersPeer()
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const warnings = await capturingWarnings(async (all) => {
      expect(await c.service(orders).get({ id: 'a', qty: '3' })).to.deep.equal({ id: 'a', qty: 3 })
      expect(await c.service(orders).get({ id: 'b', qty: '1' })).to.deep.equal({ id: 'b', qty: 1 })
      return all.filter((w) => w.code === 'ZEROMESH_DEP_CLIENT_SERVICE')
    })
    expect(warnings.map((w) => w.name)).to.deep.equal(['DeprecationWarning'])
  })

  it('a typed service: results come back; a bad input is refused in the client with no request sent, and at the peer for a caller that does not check, the handler never run', async () => {
    const { ran, handlers } = ordersPeer()
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const svc = c.proxy(orders)
    expect(await svc.get({ id: 'a', qty: '3' })).to.deep.equal({ id: 'a', qty: 3 })
    expect(ran.get).to.equal(1)
    const requestsBefore = p.stats().requests
    const early = await rejectsWith(svc.get({ id: 7 }), 'ERR_ZEROMESH_INVALID_INPUT')
    expect(early).to.be.instanceOf(InvalidInputError)
    expect(p.stats().requests, 'nothing was sent').to.equal(requestsBefore)
    // The same input, unchecked by the caller: the peer refuses it.
    const late = await rejectsWith(c.request('orders.get', { id: 7 }, { idempotent: true }), 'ERR_ZEROMESH_INVALID_INPUT')
    expect(late).to.be.instanceOf(InvalidInputError)
    expect(late.retryable).to.equal(false)
    expect(late.issues).to.deep.equal(early.issues)
    expect(late.issues).to.deep.equal([{ path: ['id'], message: 'Invalid input: expected string, received number' }])
    expect(p.stats().requests, 'sent once: not retried').to.equal(requestsBefore + 1)
    expect(ran.get, 'the handler never ran').to.equal(1)
  })

  it('streams: items of a good input; a bad one ends the stream ERR_ZEROMESH_INVALID_INPUT before any item, the handler never run', async () => {
    const { ran, handlers } = ordersPeer()
    const p = await h.peer({ handlers })
    const c = h.client({ seeds: [p.endpoint] })
    const items = []
    for await (const x of c.proxy(orders).list({ n: 4 })) items.push(x.i)
    expect(items).to.deep.equal([0, 1, 2, 3])
    let err = null
    try { for await (const x of c.stream('orders.list', { n: 1000 })) items.push(x) } catch (e) { err = e }
    expect(err).to.be.instanceOf(InvalidInputError)
    expect(err.items).to.equal(0)
    expect(err.issues[0].path).to.deep.equal(['n'])
    expect(ran.list).to.equal(1)
  })

  it('what a client that knows nothing of contracts reads: REMOTE [message, code] first (issues after), and a service answer whose digest checks out by the older rule', async () => {
    const { handlers } = ordersPeer()
    const p = await h.peer({ handlers })
    const { msg } = await rawPeer.ask(p.endpoint, encodeRequest([[1, 'orders.get', { id: 7 }, 1000]]))
    expect(msg.type).to.equal(MessageType.REPLY)
    const [r] = msg.replies
    expect(r.status).to.equal(Status.REMOTE)
    expect([r.message, r.code]).to.deep.equal(['invalid input for orders.get: id: Invalid input: expected string, received number', 'ERR_ZEROMESH_INVALID_INPUT'])
    const { frame } = await rawPeer.ask(p.endpoint, encodeServiceGet(3))
    const { unpackr } = await import('../../protocol/msgpack.js')
    const body = unpackr.unpack(frame.subarray(5))
    expect(body).to.have.length(10) // the contracts ride eighth; no events (nil), then the methods served as streams
    expect(body[8]).to.equal(null)
    expect(body[9]).to.deep.equal(['orders.list'])
    // An older client recomputes the digest from the first six fields: it matches.
    expect(serviceDigest({ methods: body[2], version: body[3], labels: body[4], capacity: body[5] })).to.equal(body[1])
    expect(body[4]['zeromesh/contracts']).to.match(/^[0-9a-f]{8}$/)
  })

  it('a peer without contracts (an older one, or plain handlers) and a client with the contract work together; the client still checks', async () => {
    let runs = 0
    const p = await h.peer({ handlers: { 'orders.get': ({ id, qty }) => { runs++; return { id, qty: qty ?? 1 } } } })
    const c = h.client({ seeds: [p.endpoint] })
    const svc = c.proxy(orders)
    expect(await svc.get({ id: 'x' })).to.deep.equal({ id: 'x', qty: 1 })
    await rejectsWith(svc.get({ id: 1 }), 'ERR_ZEROMESH_INVALID_INPUT')
    expect(runs).to.equal(1)
    const d = await c.describe(p.endpoint)
    expect(d.contracts).to.deep.equal([])
    expect(Object.keys(d.labels)).to.deep.equal([])
  })

  it('describe() returns each contract method with its JSON Schemas; several implementations given at once are all served', async () => {
    const { handlers } = ordersPeer()
    const billing = contract('billing', { methods: { charge: { input: z.object({ cents: z.number().int() }), output: z.object({ ok: z.boolean() }) } } })
    const p = await h.peer({ handlers: [handlers, implement(billing, { charge: () => ({ ok: true }) })] })
    const c = h.client({ seeds: [p.endpoint] })
    const d = await c.describe(p.endpoint)
    expect(d.methods).to.deep.equal(['billing.charge', 'orders.get', 'orders.list'])
    expect(d.contracts.map((x) => [x.name, x.version])).to.deep.equal([['billing', null], ['orders', '1.0.0']])
    const get = d.contracts[1].methods[0]
    expect(get).to.include({ name: 'orders.get', method: 'get', stream: false })
    expect(get.input.properties.id).to.deep.equal({ type: 'string' })
    expect(get.output.required).to.deep.equal(['id', 'qty'])
    expect(p.service().contracts).to.deep.equal(d.contracts)
    expect(await c.proxy(billing).charge({ cents: 5 })).to.deep.equal({ ok: true })
  })

  it('a peer whose contract changes states another digest: a client that knew the old one asks again and describes the new one', async () => {
    const v2 = contract('orders', { version: '2.0.0', methods: { get: orders.methods.get, list: orders.methods.list } })
    const p = await h.peer({ handlers: ordersPeer().handlers, membership: { probeInterval: 50 } })
    const c = h.client({ seeds: [p.endpoint], refreshInterval: 100 })
    expect((await c.describe(p.endpoint)).contracts[0].version).to.equal('1.0.0')
    const before = p.service().digest
    const impl = implement(v2, { get: ({ id, qty }) => ({ id, qty }), async * list () {} })
    p.serve('orders.get', impl['orders.get']) // the same names, another contract
    p.serve('orders.list', impl['orders.list'])
    expect(p.service().digest).to.not.equal(before)
    await eventually(async () => expect(c.peers().find((x) => x.endpoint === p.endpoint).service.contracts[0].version).to.equal('2.0.0'))
    expect((await c.describe(p.endpoint)).contracts[0].version).to.equal('2.0.0')
  })

  it('the label zeromesh/contracts is the peer\'s own: an operator\'s is refused at construction', async () => {
    let err = null
    try { await h.peer({ handlers: ordersPeer().handlers, labels: { 'zeromesh/contracts': 'x' } }) } catch (e) { err = e }
    expect(err?.code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.include('zeromesh/contracts')
  })

  it('validateOutput: a result its schema refuses is answered ERR_ZEROMESH_INVALID_OUTPUT with issues, a RemoteError in the client', async () => {
    const p = await h.peer({ handlers: implement(orders, { get: ({ id }) => ({ id, qty: 'lots' }), async * list () {} }, { validateOutput: true }) })
    const c = h.client({ seeds: [p.endpoint] })
    const err = await rejectsWith(c.proxy(orders).get({ id: 'a' }), 'ERR_ZEROMESH_REMOTE')
    expect(err).to.be.instanceOf(RemoteError)
    expect(err.remoteCode).to.equal('ERR_ZEROMESH_INVALID_OUTPUT')
    expect(err.issues[0].path).to.deep.equal(['qty'])
  })
})
