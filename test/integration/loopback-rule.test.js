// Plain stays on loopback (issue 24, item 1): a plain peer or client never connects to an
// endpoint off loopback, whoever names it (a forged SYNC, a member list, DNS). Before, one
// forged SYNC from any local process made a plain peer connect to an endpoint the attacker
// chose, admit the rogue member and list it to clients, which sent it requests in clear.
// Here the off-loopback endpoints are never dialled: the refusals are counted before any
// connect, and the spy on the transport refuses such a dial itself, so no packet can leave.
import { expect } from 'chai'
import zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { setup, tick } from '../helpers/fake-client.js'
import { encodeGossip } from '../../protocol/codec.js'
import { isLoopback } from '../../protocol/endpoint.js'
import { MemberState } from '../../protocol/constants.js'
import { insideOf } from '../../peer/peer.js'
import { insideOf as clientInsides } from '../../client/client.js'

const ROGUE = 'tcp://192.0.2.7:5555' // TEST-NET-1: never reached, and refused before any connect
const ROGUE6 = 'tcp://[::ffff:10.0.0.7]:5555'

describe('plain stays on loopback', () => {
  const h = harness()
  const socks = []
  afterEach(async () => {
    for (const s of socks.splice(0)) s.close()
    await h.cleanup()
  })

  it('loopback is 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, ipc and inproc', () => {
    for (const ep of ['tcp://127.0.0.1:1', 'tcp://127.200.3.4:1', 'tcp://[::1]:1', 'tcp://[::ffff:127.0.0.1]:1', 'tcp://[0:0:0:0:0:0:0:1]:1', 'ipc:///tmp/x', 'inproc://x']) expect(isLoopback(ep), ep).to.equal(true)
    for (const ep of [ROGUE, ROGUE6, 'tcp://[::2]:1', 'tcp://10.0.0.1:1', 'tcp://localhost.example:1', 'tcp://128.0.0.1:1', 'tcp://1.127.0.0:1', 'tcp://27.0.0.1:1']) expect(isLoopback(ep), ep).to.equal(false)
  })

  it('a forged SYNC naming members off loopback: the plain peer refuses them before any connect, never admits or lists them', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x } })
    const dialled = []
    const gossip = insideOf(p).gossip
    const connect = gossip.link.connect.bind(gossip.link)
    // The spy never lets an off-loopback dial through, so no packet can leave even where the
    // rule is broken: the test fails on the attempt.
    gossip.link.connect = (ep) => { dialled.push(ep); return isLoopback(ep) ? connect(ep) : false }
    const forger = new zmq.Dealer({ linger: 0 })
    socks.push(forger)
    forger.connect(p.endpoint)
    const claim = (endpoint) => ({ endpoint, incarnation: Date.now(), state: MemberState.ALIVE, meta: {} })
    await forger.send(encodeGossip(1, { type: 'sync', from: ROGUE, members: [claim(ROGUE), claim(ROGUE6)] }))
    await eventually(() => expect(p.stats().membership.refused.offLoopback).to.equal(2))
    const c = h.client({ seeds: [p.endpoint] })
    expect(await c.request('echo', 1)).to.equal(1)
    const listed = await c.members(p.endpoint)
    expect(listed.map((m) => m.endpoint)).to.deep.equal([p.endpoint])
    expect(dialled.filter((ep) => !isLoopback(ep))).to.deep.equal([])
    expect(p.members().map((m) => m.endpoint)).to.deep.equal([p.endpoint])
  })

  it('a member list naming peers off loopback: a plain client counts and refuses them, never dials them', async () => {
    const { clock, net, client } = setup({ discover: true }, ['tcp://127.0.0.1:1001'])
    await net.up('tcp://127.0.0.1:1001')
    clientInsides(client).learn([ROGUE, ROGUE6, 'tcp://127.0.0.2:1002'].map((endpoint) => ({ endpoint, incarnation: 1, state: MemberState.ALIVE, meta: {} })))
    await tick(clock, 5)
    expect(net.dials.filter((ep) => !isLoopback(ep))).to.deep.equal([])
    expect(net.dials).to.include('tcp://127.0.0.2:1002')
    expect(client.stats().offLoopback).to.equal(2)
    expect(client.peers().map((p) => p.endpoint).sort()).to.deep.equal(['tcp://127.0.0.1:1001', 'tcp://127.0.0.2:1002'])
  })

  it('security: false (plain on purpose) connects where the lists say', async () => {
    const { clock, net, client } = setup({ discover: true, security: false }, ['tcp://127.0.0.1:1001'])
    await net.up('tcp://127.0.0.1:1001')
    clientInsides(client).learn([{ endpoint: ROGUE, incarnation: 1, state: MemberState.ALIVE, meta: {} }])
    await tick(clock, 5)
    expect(net.dials).to.include(ROGUE)
  })
})
