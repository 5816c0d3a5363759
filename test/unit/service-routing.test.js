// Routing by method on the fake transport and a fake clock: what the client believes a peer
// serves comes from that peer alone; an UNKNOWN_METHOD answer is retried elsewhere (the
// handler never ran) and corrects the client; older peers serve anything until they say no.
import { expect } from 'chai'
import { describe as describeService } from '../../protocol/service.js'
import { MemberState } from '../../protocol/constants.js'
import { setup, track, flush, tick, A, B, C } from '../helpers/fake-client.js'
import { insideOf } from '../../client/client.js'

const digestOf = (methods) => describeService({ methods, version: null, labels: {}, capacity: null }).digest

describe('services: routing logic (fake transport, fake clock)', () => {
  it('an UNKNOWN_METHOD answer (the peer stopped serving it) is retried on a peer that serves it, idempotent or not, and the peer is asked again', async () => {
    const { clock, net, client } = setup({}, [A, B])
    net.serve(A, { methods: ['alpha'] }); net.serve(B, { methods: ['alpha'] })
    await net.up(A); await net.up(B)
    // A stops serving alpha, but has not said so yet: it answers UNKNOWN_METHOD.
    net.peers.get(A).behave = () => ['unknown']
    net.serve(A, { methods: ['other'] })
    const asked = net.peers.get(A).asked
    const r = track(client.request('alpha', 1, { idempotent: false, timeout: 1000 }))
    await tick(clock, 10)
    expect(r).to.include({ done: true, value: 1 })
    expect(net.log.map((x) => x[0])).to.deep.equal([A, B])
    expect(net.peers.get(A).asked).to.equal(asked + 1)
    expect(client.peers().find((p) => p.endpoint === A).service.methods).to.deep.equal(['other'])
    for (let i = 0; i < 4; i++) { const x = track(client.request('alpha', i)); await tick(clock, 5); expect(x.value).to.equal(i) }
    expect(net.log.slice(2).map((x) => x[0])).to.deep.equal([B, B, B, B])
  })

  it('an older peer (no service answer) may serve anything, until it answers UNKNOWN_METHOD for a method', async () => {
    const { clock, net, client } = setup({}, [A, B])
    net.serve(B, { methods: ['alpha', 'beta'] }) // A is older: it answers the question with ERROR
    net.peers.get(A).behave = (req) => req.method === 'beta' ? ['unknown'] : ['ok', req.args]
    await net.up(A); await net.up(B)
    expect(client.peers().find((p) => p.endpoint === A).service).to.equal('any')
    const got = []
    for (let i = 0; i < 6; i++) { const x = track(client.request('beta', i, { idempotent: false })); await tick(clock, 5); got.push(x.value) }
    expect(got).to.deep.equal([0, 1, 2, 3, 4, 5])
    expect(net.log.filter((x) => x[0] === A)).to.have.length(1) // once, then never again for beta
    const x = track(client.request('alpha', 'a')); await tick(clock, 5)
    const y = track(client.request('alpha', 'b')); await tick(clock, 5)
    expect([x.value, y.value]).to.deep.equal(['a', 'b'])
    expect(net.log.slice(-2).map((l) => l[0]).sort()).to.deep.equal([A, B]) // alpha still goes to A
  })

  it('a claim relayed by another peer never changes where requests go: only the peer\'s own answer does', async () => {
    const { clock, net, client } = setup({}, [A, B])
    net.serve(A, { methods: ['alpha'] }); net.serve(B, { methods: ['alpha'] })
    await net.up(A); await net.up(B)
    // A liar's member list says B serves nothing (a digest of no methods) at a new incarnation.
    insideOf(client).learn([{ endpoint: B, incarnation: 5, state: MemberState.ALIVE, meta: {}, service: digestOf([]) }])
    await tick(clock, 5)
    expect(net.peers.get(B).asked).to.equal(2) // it prompted a question to B, on B's own connection...
    const ends = []
    for (let i = 0; i < 6; i++) { const r = track(client.request('alpha', i)); await tick(clock, 3); ends.push(net.log.at(-1)[0]); expect(r.value).to.equal(i) }
    expect(new Set(ends)).to.deep.equal(new Set([A, B])) // ...and B's answer still says alpha
  })

  it('a request made before the peers said what they serve waits for their answers, then goes where the method is served', async () => {
    const { clock, net, client } = setup({}, [A, B])
    net.define(A, { service: { methods: ['alpha'] }, serviceLatency: 40 })
    net.define(B, { service: { methods: ['beta'] }, serviceLatency: 80 })
    await net.up(A); await net.up(B)
    const r = track(client.request('beta', 'x', { timeout: 1000 }))
    await tick(clock, 60)
    expect(r.done).to.equal(false) // A said alpha; B has not answered yet: it may serve beta
    await tick(clock, 40)
    expect(r).to.include({ done: true, value: 'x' })
    expect(net.log.map((x) => x[0])).to.deep.equal([B])
  })

  it('waitFor(method) resolves with the peers that serve it once one is up, rejects at its timeout and on close', async () => {
    const { clock, net, client } = setup({}, [A, B])
    net.serve(A, { methods: ['alpha'] }); net.serve(B, { methods: ['beta'] })
    await net.up(A)
    const w = track(client.waitFor('beta', { timeout: 500 }))
    const never = track(client.waitFor('gamma', { timeout: 100 }))
    const closed = track(client.waitFor('gamma', { timeout: 5000 }))
    await tick(clock, 101)
    expect(never.code).to.equal('ERR_ZEROMESH_TIMEOUT')
    expect(w.done).to.equal(false)
    await net.up(B)
    await tick(clock, 2)
    expect(w.value).to.deep.equal([B])
    await client.close()
    await flush()
    expect(closed.code).to.equal('ERR_ZEROMESH_CLOSED')
    expect(track(client.waitFor('beta')).done).to.equal(false)
  })

  // Seen in CI (the failover demo, 2026-11-25): under load both peers serving whoami and spin
  // timed out five times in a row and were ejected together, which the panic threshold
  // allowed (2 of the 4 peers up, billing's included); every whoami and spin request then
  // waited for a peer and failed NO_PEERS at its 2 s deadline, while both peers answered.
  it('ejection never leaves a method with no peer: when every peer serving it is ejected, its requests go to them (a panic threshold per method)', async () => {
    const D = 'tcp://127.0.0.1:1004'
    const { clock, net, client } = setup({}, [A, B, C, D])
    net.serve(A, { methods: ['alpha'] }); net.serve(B, { methods: ['alpha'] })
    net.serve(C, { methods: ['beta'] }); net.serve(D, { methods: ['beta'] })
    for (const ep of [A, B, C, D]) await net.up(ep)
    for (let i = 0; i < 6; i++) { track(client.request('alpha', i)); await tick(clock, 5) } // learn 1 ms latency
    for (const ep of [A, B]) net.peers.get(ep).behave = () => ['silent'] // a stall
    for (let i = 0; i < 40; i++) { track(client.request('alpha', i, { timeout: 3000 })); await tick(clock, 2) }
    await tick(clock, 400)
    const stateOf = (ep) => client.peers().find((p) => p.endpoint === ep).state
    expect([A, B].map(stateOf)).to.deep.equal(['ejected', 'ejected']) // 2 of 4 peers: allowed
    for (const ep of [A, B]) net.peers.get(ep).behave = (req) => ['ok', req.args] // the stall is over
    const r = track(client.request('alpha', 'after', { timeout: 300 }))
    const other = track(client.request('beta', 'b', { timeout: 300 }))
    await tick(clock, 20)
    expect(r).to.include({ done: true, value: 'after' })
    expect(other).to.include({ done: true, value: 'b' })
    expect([C, D].map(stateOf)).to.deep.equal(['up', 'up'])
  })
})

describe('services: what claims carry stays small', () => {
  it('a member list of 1,000 members serving 50 methods each fits one frame, and claimBytes bounds each claim with its suspicion and service digest', async () => {
    const { encodeMembers } = await import('../../protocol/codec.js')
    const { claimBytes } = await import('../../peer/membership/member-table.js')
    const { metaSize } = await import('../../protocol/codec.js')
    const fifty = Array.from({ length: 50 }, (_, i) => `orders.method${i}`)
    const digest = describeService({ methods: fifty, version: '2.1.0', labels: { zone: 'a' }, capacity: 8 }).digest
    const meta = { version: '0.2.0' }
    const members = Array.from({ length: 1000 }, (_, i) => ({ endpoint: `tcp://10.0.${i >> 8}.${i & 255}:5555`, incarnation: 1700000000000 + i, state: 1, meta, by: 'tcp://10.0.0.1:5555', service: digest }))
    const frame = encodeMembers(1, 0xffffffff, members)
    const bound = members.reduce((n, m) => n + claimBytes({ ...m, metaBytes: metaSize(meta) }), 0)
    expect(frame.length).to.be.below(1024 * 1024 - 512)
    expect(frame.length, 'the bytes the list budget counts are an upper bound').to.be.below(bound + 32)
    expect(frame.length / 1000, 'bytes a member').to.be.below(80)
  })
})
