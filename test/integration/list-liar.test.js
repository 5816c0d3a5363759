// One liar does not hide an honest peer (issue 24, item 2). A peer holding the cluster key
// whose member lists said a learned honest peer was dead at incarnation 2^53-1 kept it
// draining in every client that fetched the list, for good (39 of 40 requests went to the
// liar). Clients now refuse claims beyond the incarnation horizon, as peers do, and before
// they take a connected peer out of rotation on a list's word they ask the peer itself (PING);
// one that answers stays.
import { expect } from 'chai'
import zmq from 'zeromq'
import path from 'node:path'
import { tmpdir } from 'node:os'
import { setup, track, tick, A, B } from '../helpers/fake-client.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { MemberState, MessageType, Status } from '../../protocol/constants.js'
import { decode, encodeMembers, encodeReply } from '../../protocol/codec.js'
import { insideOf } from '../../client/client.js'

const dead = (endpoint, incarnation) => ({ endpoint, incarnation, state: MemberState.DEAD, meta: {} })
const alive = (endpoint, incarnation) => ({ endpoint, incarnation, state: MemberState.ALIVE, meta: {} })

describe('a list that lies about a live peer', () => {
  it('a claim beyond the 24 h horizon is refused and counted: the peer keeps its traffic', async () => {
    const { clock, net, client } = setup({ discover: true }, [A])
    net.define(B)
    insideOf(client).learn([alive(B, Date.now())])
    await net.up(A); await net.up(B)
    insideOf(client).learn([dead(B, 2 ** 53 - 1)])
    await tick(clock, 5)
    expect(client.stats().beyondHorizon).to.equal(1)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('up')
    const rs = Array.from({ length: 40 }, (_, i) => track(client.request('echo', i)))
    await tick(clock, 10)
    expect(rs.every((r) => r.done && r.value !== undefined)).to.equal(true)
    expect(net.log.filter((x) => x[0] === B).length).to.be.within(15, 25)
  })

  it('a dead claim within the horizon about a connected peer: the client asks the peer; one that answers stays in rotation', async () => {
    const { clock, net, client } = setup({ discover: true }, [A])
    net.define(B)
    insideOf(client).learn([alive(B, Date.now())])
    await net.up(A); await net.up(B)
    insideOf(client).learn([dead(B, Date.now() + 1000)])
    await tick(clock, 5)
    expect(net.peers.get(B).pinged).to.equal(1)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('up')
    expect(client.stats().verified).to.equal(1)
    const rs = Array.from({ length: 20 }, (_, i) => track(client.request('echo', i)))
    await tick(clock, 10)
    expect(rs.every((r) => r.value !== undefined)).to.equal(true)
    expect(net.log.filter((x) => x[0] === B).length).to.be.at.least(5)
  })

  it('a peer that is leaving answers that it is (its PONG says left): the list is right, and it is drained', async () => {
    // A stopping peer answers PING until its socket closes; before the PONG carried its state,
    // the client took that for "alive", kept the peer, and never dropped it (1 run in 4).
    const { clock, net, client } = setup({ discover: true }, [A])
    net.define(B)
    insideOf(client).learn([alive(B, 5)])
    await net.up(A); await net.up(B)
    net.peers.get(B).leaving = true
    insideOf(client).learn([{ endpoint: B, incarnation: 5, state: MemberState.LEFT, meta: {} }])
    await tick(clock, 5)
    expect(net.peers.get(B).pinged).to.equal(1)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('draining')
    net.down(B)
    expect(client.peers().find((p) => p.endpoint === B)).to.equal(undefined) // gone, dropped with its connection
  })

  it('a peer that does not answer the question is drained, as the list said', async () => {
    const { clock, net, client } = setup({ discover: true, membersTimeout: 200 }, [A])
    net.define(B)
    insideOf(client).learn([alive(B, Date.now())])
    await net.up(A); await net.up(B)
    net.peers.get(B).silentToPings = true
    insideOf(client).learn([dead(B, Date.now() + 1000)])
    await tick(clock, 50)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('up') // still asking
    await tick(clock, 200)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('draining')
  })
})

describe('a list that lies about a live peer, over ZeroMQ', () => {
  const h = harness()
  const raws = []
  afterEach(async () => {
    for (const r of raws.splice(0)) r.close()
    await h.cleanup()
  })

  // The probe of the issue: a "peer" whose lists say a learned honest peer B is dead, at
  // 2^53-1 (beyond the horizon) and then just above B's incarnation (within it).
  for (const [name, lie] of [['at 2^53-1', () => 2 ** 53 - 1], ['just above its incarnation', (inc) => inc + 1]]) {
    it(`a liar's lists say B is dead ${name}: B keeps serving, all of 40 requests`, async () => {
      const b = await h.peer({ handlers: { who: (_, ctx) => ctx.endpoint } })
      const incB = b.members()[0].incarnation
      const ep = `ipc://${path.join(tmpdir(), `zm-liar-${process.pid}-${Date.now()}`)}`
      const liar = new zmq.Router({ linger: 0, routingId: ep })
      raws.push(liar)
      await liar.bind(ep)
      let lists = 0
      ;(async () => {
        for await (const [id, frame] of liar) {
          const msg = decode(frame)
          if (msg.type === MessageType.MEMBERS_GET) {
            const claimB = lists++ === 0 ? alive(b.endpoint, incB) : dead(b.endpoint, lie(incB))
            await liar.send([id, encodeMembers(msg.seq, 1000 + lists, [alive(ep, 1), claimB])])
          } else if (msg.type === MessageType.REQUEST) {
            // The liar serves nothing: a request that reaches it is refused and goes to B.
            // When the liar answered them, it took 31 of 40 in one CI run (B 9): how many went
            // to the liar measured the strategy and the timing, not whether the lie cost B.
            await liar.send([id, encodeReply({ mv: 2000 + lists }, msg.requests.map((r) => [r.id, Status.UNKNOWN_METHOD, [`unknown method "${r.method}"`, null]]))])
          }
        }
      })().catch(() => {})
      const c = h.client({ seeds: [ep], refreshInterval: 100 })
      await eventually(() => expect(c.peers().find((p) => p.endpoint === b.endpoint)?.state).to.equal('up'))
      await eventually(() => expect(lists).to.be.at.least(3))
      const got = []
      for (let i = 0; i < 40; i++) got.push(await c.request('who', i))
      expect(got.filter((x) => x === b.endpoint).length, `B answered ${got.filter((x) => x === b.endpoint).length} of 40`).to.equal(40)
      expect(c.stats().beyondHorizon + c.stats().verified).to.be.at.least(1)
    })
  }
})

describe('a peer reported down that is not', () => {
  // ZeroMQ's connection events name the endpoint only: a late "disconnect" of an old
  // connection, after the new one's handshake (a redial, a reconnect after a freeze), marks a
  // live peer down, and no handshake comes again. The client asks a down peer itself now and
  // then; one that answers is up. (Seen in CI: the demo's thawed peer stayed down for good.)
  it('a stale disconnect: the client asks the peer, it answers, and it is back in rotation', async () => {
    const { clock, net, client } = setup({}, [A, B])
    await net.up(A); await net.up(B)
    net.h.onDown(B) // the event of an old connection; B's connection is in fact up
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('down')
    await tick(clock, 1200)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('up')
    const rs = Array.from({ length: 10 }, (_, i) => track(client.request('echo', i)))
    await tick(clock, 5)
    expect(rs.every((r) => r.value !== undefined)).to.equal(true)
    expect(net.log.some((x) => x[0] === B)).to.equal(true)
  })

  it('a peer really down does not answer, and stays down', async () => {
    const { clock, net, client } = setup({}, [A, B])
    await net.up(A); await net.up(B)
    net.down(B)
    await tick(clock, 3000)
    expect(client.peers().find((p) => p.endpoint === B).state).to.equal('down')
  })
})
