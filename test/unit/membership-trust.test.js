// What a claim from the network may do (admission), candidates, reaping and list bounds:
// first as pure rules by table, then as the attacks seen in outside testing, replayed on an
// in-memory cluster with a virtual clock. The attacker is whoever calls `handle()`: a
// request on a peer's bound socket, which anyone who can reach the port can send.
import { expect } from 'chai'
import { admit, Action } from '../../peer/membership/admission.js'
import { Candidates } from '../../peer/membership/candidates.js'
import { MemberTable, State } from '../../peer/membership/member-table.js'
import { SimCluster, SIM_EPOCH } from '../../sim/membership-cluster.js'
import { INCARNATION_HORIZON_MS, MessageType } from '../../protocol/constants.js'
import { encodeGossip, decode } from '../../protocol/codec.js'

const { ALIVE, SUSPECT, DEAD, LEFT } = State
const SELF = 'tcp://10.0.0.1:5555'
const X = 'tcp://10.0.0.2:5555'
const EVE = 'tcp://10.0.0.66:5555'

describe('membership admission (pure rules)', () => {
  const self = { endpoint: SELF, incarnation: 10, state: ALIVE }
  const horizon = 1000
  const held = (incarnation, state) => ({ endpoint: X, incarnation, state, meta: {} })
  const claim = (incarnation, state, endpoint = X) => ({ endpoint, incarnation, state, meta: {} })
  // [held, claim, author, vouched, action, state applied]
  const rows = [
    [held(5, ALIVE), claim(5, DEAD), EVE, false, Action.APPLY, SUSPECT, 'a remote dead is a suspicion'],
    [held(5, ALIVE), claim(5, LEFT), EVE, false, Action.APPLY, SUSPECT, 'a relayed left is only a suspicion'],
    [held(5, ALIVE), claim(5, LEFT), X, false, Action.APPLY, LEFT, 'left from the member itself is a leave'],
    [held(5, ALIVE), claim(5, LEFT), EVE, true, Action.APPLY, SUSPECT, 'vouched or not, left counts only from the member'],
    [held(5, SUSPECT), claim(5, DEAD), EVE, false, Action.IGNORE, SUSPECT, 'a dead claim about a suspect confirms it'],
    [held(5, DEAD), claim(5, SUSPECT), EVE, false, Action.IGNORE, SUSPECT, 'our own conclusion stands'],
    [held(5, ALIVE), claim(1001, DEAD), EVE, false, Action.REFUSE, undefined, 'beyond the horizon'],
    [held(5, ALIVE), claim(2 ** 53 - 1, LEFT), X, false, Action.REFUSE, undefined, 'the 2^53-1 eviction'],
    [undefined, claim(5, ALIVE), EVE, false, Action.CANDIDATE, ALIVE, 'hearsay of a new member'],
    [undefined, claim(5, ALIVE), EVE, true, Action.APPLY, ALIVE, 'a new member vouched for'],
    [undefined, claim(5, DEAD), EVE, true, Action.IGNORE, undefined, 'a dead claim about a stranger (or one reaped) is no reason to add it'],
    [undefined, claim(5, SUSPECT), EVE, true, Action.IGNORE, undefined, 'nor is a suspicion'],
    [held(5, DEAD), claim(6, ALIVE), EVE, false, Action.CANDIDATE, ALIVE, 'hearsay does not bring the dead back'],
    [held(5, DEAD), claim(6, ALIVE), X, true, Action.APPLY, ALIVE, 'the member itself answering does'],
    [held(5, SUSPECT), claim(6, ALIVE), EVE, false, Action.APPLY, ALIVE, 'a refutation of a live member spreads by hearsay'],
    [held(5, ALIVE), claim(4, DEAD), EVE, false, Action.IGNORE, SUSPECT, 'stale'],
  ]
  for (const [h, c, author, vouched, action, state, why] of rows) {
    it(`${h ? `${h.incarnation}:${h.state}` : 'unknown'} <- ${c.incarnation}:${c.state} from ${author === X ? 'itself' : 'another'}${vouched ? ', vouched' : ''}: ${action} (${why})`, () => {
      const d = admit(h, c, { self, author, vouched, horizon })
      expect(d.action).to.equal(action)
      if (d.claim !== undefined) expect(d.claim.state).to.equal(state)
      if (d.claim?.state === SUSPECT && c.state !== SUSPECT) expect(d.claim.by).to.equal(author)
    })
  }

  it('about this peer: refute anything but its own alive claim, and nothing beyond the horizon', () => {
    const at = (incarnation, state) => admit(undefined, claim(incarnation, state, SELF), { self, author: EVE, vouched: false, horizon }).action
    expect(at(10, ALIVE)).to.equal(Action.IGNORE)
    expect(at(9, DEAD)).to.equal(Action.IGNORE)
    expect(at(10, SUSPECT)).to.equal(Action.REFUTE)
    expect(at(10, LEFT)).to.equal(Action.REFUTE)
    expect(at(999, ALIVE)).to.equal(Action.REFUTE)
    expect(at(1001, DEAD)).to.equal(Action.REFUSE)
  })
})

describe('membership candidates, reaping and list bounds', () => {
  it('candidates are capped and expire oldest first', () => {
    const c = new Candidates({ max: 2, ttl: 100 })
    expect(c.offer({ endpoint: 'a', incarnation: 1 }, 0)).to.equal('added')
    expect(c.offer({ endpoint: 'b', incarnation: 1 }, 50)).to.equal('added')
    expect(c.offer({ endpoint: 'c', incarnation: 1 }, 60)).to.equal('full')
    expect(c.offer({ endpoint: 'a', incarnation: 3 }, 70)).to.equal('updated')
    expect(c.expire(120)).to.deep.equal(['a'])
    expect(c.take('b')).to.deep.equal({ endpoint: 'b', incarnation: 1 })
    expect(c.size).to.equal(0)
  })

  it('dead and left members are reaped after reapAfter, unless they came back', () => {
    const t = new MemberTable({ endpoint: SELF, incarnation: 1, meta: {} })
    t.apply(claim(X, 1, ALIVE), 0)
    t.apply(claim(X, 1, DEAD), 100)
    t.apply(claim('tcp://10.0.0.3:1', 1, ALIVE), 0)
    t.apply(claim('tcp://10.0.0.3:1', 1, LEFT), 200)
    t.apply(claim('tcp://10.0.0.4:1', 1, DEAD), 0) // a stranger's death: never added
    expect(t.reap(1000, 1000)).to.deep.equal([])
    expect(t.reap(1100, 1000).map((m) => m.endpoint)).to.deep.equal([X])
    t.apply(claim('tcp://10.0.0.3:1', 2, ALIVE), 1150) // restarted before its reaping
    expect(t.reap(5000, 1000)).to.deep.equal([])
    expect(t.all().map((m) => m.endpoint)).to.deep.equal([SELF, 'tcp://10.0.0.3:1'])
    function claim (endpoint, incarnation, state) { return { endpoint, incarnation, state, meta: {} } }
  })
})

describe('membership under forged claims (in-memory cluster, virtual clock)', function () {
  this.timeout(30000)
  let sim
  afterEach(() => sim?.stop())
  const eps = (n) => Array.from({ length: n }, (_, i) => `tcp://10.0.0.${i + 1}:5555`)

  async function cluster (n, config) {
    sim = new SimCluster({ config })
    const list = eps(n)
    sim.addConverged(list)
    return list
  }

  /** A request to `ep`'s bound socket, as an attacker would send it (decoded from real bytes). */
  function forged (ep, seq, msg) {
    return sim.nodes.get(ep).handle(decode(encodeGossip(seq, msg)).gossip)
  }

  /** Every state every node held for `endpoint` over `ms`, sampled each 10 ms. */
  async function watch (endpoint, ms) {
    const seen = new Set()
    for (let t = 0; t < ms; t += 10) {
      for (const [ep, m] of sim.nodes) if (ep !== endpoint) seen.add(m.members().find((x) => x.endpoint === endpoint)?.state)
      await sim.run(10)
    }
    return seen
  }

  // A peer answers a probe that doubts a member it holds alive at a later incarnation with that
  // claim (a healed partition's stale suspicions, swim.js correct()). A probe of forged doubts
  // about every member must not make the answer as large as the member list.
  it('a probe doubting 40 members gets at most a message\'s worth (16) of corrections in its answer', async () => {
    const list = await cluster(42)
    const [a, eve, ...rest] = list
    const doubts = rest.map((ep) => ({ endpoint: ep, incarnation: sim.nodes.get(a).table.get(ep).incarnation - 1, state: SUSPECT, meta: {} }))
    const ack = await forged(a, 1, { type: 'probe', from: eve, target: a, updates: doubts })
    const corrections = ack.updates.filter((u) => rest.includes(u.endpoint) && u.state === ALIVE)
    expect(corrections.length).to.equal(16)
    // And one doubt is answered: the prober learns the member's later incarnation.
    const one = await forged(a, 2, { type: 'probe', from: eve, target: a, updates: doubts.slice(0, 1) })
    expect(one.updates.find((u) => u.endpoint === rest[0])).to.include({ state: ALIVE, incarnation: doubts[0].incarnation + 1 })
  })

  it('a forged left at incarnation 2^53-1 "from" the victim is refused: it stays alive everywhere', async () => {
    const [a, victim] = await cluster(5)
    await forged(a, 1, { type: 'probe', from: victim, target: a, updates: [{ endpoint: victim, incarnation: 2 ** 53 - 1, state: LEFT, meta: {} }] })
    expect([...await watch(victim, 3000)]).to.deep.equal(['alive'])
    expect(sim.nodes.get(a).counts.refused.beyondHorizon).to.equal(1)
  })

  it('a forged left at the edge of the horizon is accepted, then refuted: the victim is alive everywhere within a second', async () => {
    const list = await cluster(5)
    const [a, victim] = list
    const edge = SIM_EPOCH + sim.clock.now() + INCARNATION_HORIZON_MS
    for (const ep of list.filter((e) => e !== victim)) {
      await forged(ep, 1, { type: 'probe', from: victim, target: ep, updates: [{ endpoint: victim, incarnation: edge, state: LEFT, meta: {} }] })
    }
    expect(sim.view(a, victim)).to.equal('left')
    const t = await sim.until(() => sim.allSee(victim, ['alive']), { max: 10000 })
    expect(t).to.be.within(0, 1000)
    expect(sim.nodes.get(victim).table.self.incarnation).to.be.above(edge)
  })

  it('a forged dead about a live member makes it suspect, never dead, and it refutes', async () => {
    const list = await cluster(5)
    const [a, b, victim] = list
    const inc = sim.nodes.get(victim).table.self.incarnation
    await forged(a, 1, { type: 'sync', from: b, members: [{ endpoint: victim, incarnation: inc + 5, state: DEAD, meta: {} }] })
    expect(sim.view(a, victim)).to.equal('suspect')
    const seen = await watch(victim, 5000)
    expect(seen.has('dead')).to.equal(false)
    expect(sim.allSee(victim, ['alive'])).to.equal(true)
  })

  it('10,000 made-up members in 10 syncs: at most maxCandidates held, none listed, all expire, and a real death is still found in time', async () => {
    const list = await cluster(5)
    const [a] = list
    for (let s = 0; s < 10; s++) {
      const members = Array.from({ length: 1000 }, (_, i) => ({ endpoint: `tcp://10.9.${s}.${i % 250}:${1000 + i}`, incarnation: 1, state: ALIVE, meta: {} }))
      await forged(a, s, { type: 'sync', from: `tcp://10.8.0.${s}:1`, members })
    }
    const m = sim.nodes.get(a)
    expect(m.candidates.size).to.equal(64)
    expect(m.counts.candidatesDropped).to.equal(10000 - 64)
    expect(m.members()).to.have.length(5)
    expect(m.fullState().map((c) => c.endpoint).sort()).to.deep.equal([...list].sort())
    sim.kill(list[3])
    const dead = await sim.until(() => sim.allSee(list[3], ['dead']), { max: 10000 })
    expect(dead).to.be.within(0, 3500)
    await sim.run(6000)
    expect(m.candidates.size).to.equal(0)
    expect(m.counts.candidatesExpired).to.equal(64)
    expect(m.counts.verified).to.equal(0)
  })

  it('a member heard of second-hand is admitted once it answers a probe', async () => {
    sim = new SimCluster()
    const [a, b, c] = eps(3)
    sim.addConverged([a, b])
    sim.add(c) // running, but nobody knows it
    await forged(a, 1, { type: 'probe', from: EVE, target: a, updates: [{ endpoint: c, incarnation: 1000, state: ALIVE, meta: {} }] })
    expect(sim.view(a, c)).to.equal(undefined) // not yet
    const t = await sim.until(() => sim.view(a, c) === 'alive', { max: 2000 })
    expect(t).to.be.within(0, 300)
    expect(sim.nodes.get(a).counts.verified).to.equal(1)
  })

  it('a probe request for an endpoint that is not a member is answered NACK without contacting it', async () => {
    const [a] = await cluster(3)
    const contacted = []
    const node = sim.nodes.get(a)
    const request = node.o.net.request
    node.o.net.request = (to, msg, ms) => { contacted.push(to); return request(to, msg, ms) }
    const reply = await forged(a, 1, { type: 'probe-req', from: EVE, target: 'tcp://10.7.7.7:22', updates: [] })
    expect(reply).to.deep.equal({ type: 'nack', from: a })
    expect(contacted).to.not.include('tcp://10.7.7.7:22')
    expect(node.counts.refused.probeTarget).to.equal(1)
  })

  it('dead members are reaped after reapAfter: gone from views and lists, tried by push-pull only until reconnectTimeout', async () => {
    const list = await cluster(4, { reapAfter: 5000, reconnectTimeout: 20000, pushPullInterval: 500 })
    sim.kill(list[3])
    await sim.until(() => sim.allSee(list[3], ['dead']))
    await sim.run(6000)
    const node = sim.nodes.get(list[0])
    for (const ep of list.slice(0, 3)) expect(sim.view(ep, list[3])).to.equal(undefined)
    expect(node.fullState().map((c) => c.endpoint)).to.not.include(list[3])
    expect(node.counts.reaped).to.equal(1)
    const tried = []
    const request = node.o.net.request
    node.o.net.request = (to, msg, ms) => { if (msg.type === 'sync') tried.push([sim.clock.now(), to]); return request(to, msg, ms) }
    await sim.run(40000)
    const late = tried.filter(([t, to]) => to === list[3] && t > sim.clock.now() - 20000)
    expect(tried.some(([, to]) => to === list[3])).to.equal(true) // still tried for a while...
    expect(late).to.deep.equal([]) //                                 ...then never again
  })

  it('a partition longer than reapAfter still heals: reaped dead members are tried by push-pull', async () => {
    const list = await cluster(6, { reapAfter: 3000, pushPullInterval: 1000 })
    sim.net.partition(list.slice(0, 3), list.slice(3))
    await sim.until(() => sim.view(list[0], list[5]) === 'dead' && sim.view(list[5], list[0]) === 'dead')
    await sim.run(5000)
    expect(sim.view(list[0], list[5])).to.equal(undefined) // reaped
    sim.net.heal()
    const t = await sim.until(() => list.every((ep) => sim.allSee(ep, ['alive'])), { max: 60000 })
    expect(t).to.be.within(0, 30000)
  })

  it('a full member list stays within its byte budget whatever the cluster size, self first', async () => {
    sim = new SimCluster()
    const [a] = eps(1)
    const node = sim.add(a)
    for (let i = 0; i < 3000; i++) node.put({ endpoint: `tcp://10.1.${i >> 8}.${i & 255}:5555`, incarnation: 1, state: ALIVE, meta: { zone: 'z'.repeat(100) } })
    const budget = 64 * 1024
    const claims = node.fullState(budget)
    expect(claims[0].endpoint).to.equal(a)
    const frame = encodeGossip(1, { type: 'sync', from: a, members: claims })
    expect(frame.length).to.be.at.most(budget + 512)
    expect(claims.length).to.be.within(300, 3001)
    expect(decode(frame).type).to.equal(MessageType.SYNC)
    expect(node.counts.listTrimmed).to.equal(1)
  })
})
