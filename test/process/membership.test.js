// Membership with real peer processes on loopback: chained seeds, SIGKILL, SIGSTOP/SIGCONT,
// restart at the same endpoint, SIGTERM leave, and a client that finds a peer started later.
// Bounds are the "must" column of the membership issue; the times seen are printed.
import { expect } from 'chai'
import { startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { figure } from '../helpers/figures.js'

describe('membership across peer processes', function () {
  this.timeout(60000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  /** Each peer's view: { [observer]: { [endpoint]: state } }. */
  async function views (observer, peers) {
    const out = {}
    await Promise.all(peers.map(async (p) => {
      const list = await observer.members(p.endpoint)
      out[p.endpoint] = Object.fromEntries(list.map((m) => [m.endpoint, m.state]))
    }))
    return out
  }

  async function chain (n) {
    const peers = []
    for (let i = 0; i < n; i++) peers.push(await startPeer(i === 0 ? [] : ['--seeds', peers[i - 1].endpoint]))
    return peers
  }

  /** n chained peers and an observer client, once every peer sees all n alive. */
  async function converged (n) {
    const peers = await chain(n)
    const observer = h.client({ seeds: peers[0].endpoint, discover: false, timeout: 1000 })
    await eventually(async () => {
      const v = await views(observer, peers)
      for (const p of peers) expect(Object.values(v[p.endpoint]).filter((s) => s === 'alive')).to.have.length(n)
    }, { timeout: 5000, interval: 50 })
    return { peers, observer }
  }

  function timed (label, t0) {
    const ms = Date.now() - t0
    figure(`${label}: ${ms} ms`)
    return ms
  }

  it('5 peers with chained seeds see each other, then a SIGKILLed one is not alive for anyone', async () => {
    let t0 = Date.now()
    const peers = await chain(5)
    const tLast = Date.now()
    const observer = h.client({ seeds: peers[0].endpoint, discover: false, timeout: 1000 })
    await eventually(async () => {
      const v = await views(observer, peers)
      for (const p of peers) for (const q of peers) expect(v[p.endpoint][q.endpoint], `${p.endpoint} sees ${q.endpoint}`).to.equal('alive')
    }, { timeout: 5000, interval: 50 })
    timed('5 peers all alive everywhere after the first started', t0)
    timed('...after the last one printed its endpoint', tLast)

    const victim = peers[2]
    const rest = peers.filter((p) => p !== victim)
    t0 = Date.now()
    process.kill(victim.pid, 'SIGKILL')
    await eventually(async () => {
      const v = await views(observer, rest)
      for (const p of rest) expect(v[p.endpoint][victim.endpoint]).to.be.oneOf(['suspect', 'dead'])
    }, { timeout: 5000, interval: 50 })
    timed('SIGKILLed peer not alive for anyone', t0)
    await eventually(async () => {
      const v = await views(observer, rest)
      for (const p of rest) expect(v[p.endpoint][victim.endpoint]).to.equal('dead')
    }, { timeout: 10000, interval: 100 })
    timed('SIGKILLed peer dead for everyone', t0)
  })

  it('a SIGSTOPped peer is not alive; after SIGCONT it refutes and is alive again', async () => {
    const { peers, observer } = await converged(3)
    const frozen = peers[1]
    const rest = [peers[0], peers[2]]
    let t0 = Date.now()
    process.kill(frozen.pid, 'SIGSTOP')
    await eventually(async () => {
      const v = await views(observer, rest)
      for (const p of rest) expect(v[p.endpoint][frozen.endpoint]).to.not.equal('alive')
    }, { timeout: 15000, interval: 50 })
    timed('SIGSTOPped peer not alive', t0)
    t0 = Date.now()
    process.kill(frozen.pid, 'SIGCONT')
    await eventually(async () => {
      const v = await views(observer, peers)
      for (const p of peers) for (const q of peers) expect(v[p.endpoint][q.endpoint], `${p.endpoint} sees ${q.endpoint}`).to.equal('alive')
    }, { timeout: 15000, interval: 100 })
    timed('after SIGCONT alive again everywhere', t0)
  })

  it('SIGTERM: the leave shows as left at once; a restart at the same endpoint is alive again', async () => {
    const { peers, observer } = await converged(3)
    const leaving = peers[2]
    const t0 = Date.now()
    process.kill(leaving.pid, 'SIGTERM')
    expect((await leaving.exited).code).to.equal(0)
    const v = await views(observer, peers.slice(0, 2))
    for (const p of peers.slice(0, 2)) expect(v[p.endpoint][leaving.endpoint]).to.equal('left')
    timed('left everywhere after SIGTERM (including the exit)', t0)

    const again = await startPeer(['--bind', leaving.endpoint, '--seeds', peers[0].endpoint, '--meta', '{"zone":"b","capacity":2}'])
    expect(again.endpoint).to.equal(leaving.endpoint)
    await eventually(async () => {
      const w = await views(observer, peers.slice(0, 2))
      for (const p of peers.slice(0, 2)) expect(w[p.endpoint][leaving.endpoint]).to.equal('alive')
    }, { timeout: 5000, interval: 50 })
    // its metadata travelled with its membership
    const seen = (await observer.members(peers[0].endpoint)).find((m) => m.endpoint === leaving.endpoint)
    expect(seen.meta).to.deep.include({ zone: 'b', capacity: 2 })
    expect(seen.meta.version).to.be.a('string')
  })

  it('a client seeded with one peer sends work to a peer that joined later', async () => {
    const a = await startPeer()
    const client = h.client({ seeds: [a.endpoint] })
    expect((await client.request('whoami')).pid).to.equal(a.pid)
    const t0 = Date.now()
    const b = await startPeer(['--seeds', a.endpoint])
    const pids = new Set()
    await eventually(async () => {
      pids.add((await client.request('whoami')).pid)
      expect(pids.has(b.pid)).to.equal(true)
    }, { timeout: 2000, interval: 10 })
    timed('client used the new peer after it was started', t0)
    expect(client.peers().map((p) => p.endpoint)).to.include(b.endpoint)
  })
})
