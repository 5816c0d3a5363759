// User code that throws (a strategy's select or onResult, an event listener, a logger) never
// stalls the request path: every call settles, and the error surfaces as an 'error' event
// when someone listens, a log line or a process warning otherwise. (Issue: trust, round two,
// item 8: a strategy whose onResult threw made every request time out silently.)
import { expect } from 'chai'
import { setup, track, tick } from '../helpers/fake-client.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { capturingWarnings } from '../helpers/warnings.js'

const boom = () => { throw new Error('user code broke') }

describe('user code that throws never stalls a call', () => {
  it('a strategy whose onResult throws: requests still resolve, and the error is an error event', async () => {
    const { clock, net, client } = setup({ strategy: { select: (peers) => peers[0], onResult: boom } })
    const errors = []
    client.on('error', (err) => errors.push(err))
    await net.up('tcp://127.0.0.1:1001')
    const rs = [0, 1, 2].map((i) => track(client.request('echo', i, { timeout: 500 })))
    await tick(clock, 10)
    expect(rs.map((r) => r.value)).to.deep.equal([0, 1, 2])
    expect(errors.length).to.be.at.least(1)
    expect(errors[0]).to.include({ code: 'ERR_ZEROMESH_USER_CODE' })
    expect(errors[0].message).to.match(/strategy\.onResult threw: user code broke/)
    expect(errors[0].cause.message).to.equal('user code broke')
  })

  it('a strategy whose select throws: that call fails at once with ERR_ZEROMESH_USER_CODE, not at its deadline', async () => {
    const { clock, net, client } = setup({ strategy: { select: boom } })
    client.on('error', () => {})
    await net.up('tcp://127.0.0.1:1001')
    const r = track(client.request('echo', 1, { timeout: 500 }))
    await tick(clock, 2)
    expect(r.code).to.equal('ERR_ZEROMESH_USER_CODE')
  })

  it('a peer listener and a logger that throw: requests still resolve; with no error listener it is a warning', async () => {
    await capturingWarnings(async (all) => {
      const warnings = { get length () { return all.filter((w) => w.code === 'ERR_ZEROMESH_USER_CODE').length } }
      const logger = { debug: boom, info: boom, warn: boom, error: boom }
      const { clock, net, client } = setup({ logger })
      client.on('peer', boom)
      for (const ep of ['tcp://127.0.0.1:1001', 'tcp://127.0.0.1:1002']) await net.up(ep)
      const rs = [0, 1, 2, 3].map((i) => track(client.request('echo', i, { timeout: 500 })))
      await tick(clock, 10)
      expect(rs.map((r) => r.value)).to.deep.equal([0, 1, 2, 3])
      await eventually(() => expect(warnings.length).to.be.at.least(1))
    })
  })

  describe('on a peer', () => {
    const h = harness()
    afterEach(() => h.cleanup())

    it('a member listener that throws does not stop membership or requests', async () => {
      const a = await h.peer({ handlers: { echo: (x) => x }, membership: { probeInterval: 50 } })
      const errors = []
      a.on('member', boom)
      a.on('error', (err) => errors.push(err))
      const b = await h.peer({ handlers: { echo: (x) => x }, seeds: [a.endpoint], membership: { probeInterval: 50 } })
      await eventually(() => expect(a.members().filter((m) => m.state === 'alive')).to.have.length(2))
      await eventually(() => expect(b.members().filter((m) => m.state === 'alive')).to.have.length(2))
      const c = h.client({ seeds: [a.endpoint] })
      expect(await c.request('echo', 7)).to.equal(7)
      expect(errors.some((e) => e.code === 'ERR_ZEROMESH_USER_CODE' && /'member' listener threw/.test(e.message))).to.equal(true)
    })
  })
})
