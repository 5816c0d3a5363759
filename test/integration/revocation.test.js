// Revocation cuts open connections (issue 24, item 3). A secured client proves its key on
// each new connection (KEY_PROOF, PROTOCOL.md 4.9); when the allow-list drops a key, the
// connections that proved it get no more answers at once, and other clients are not
// disturbed. A connection that never proved a key (an older client) is reached by closing
// every connection. Real CURVE sockets on 127.0.0.1; the list changes as files.
import { expect } from 'chai'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually, delay } from '../helpers/eventually.js'
import { newKeyPair, z85Decode } from '../../transport/keys.js'
import { encodeRequest, encodePing, encodeKeyProof, encodeMembersGet, decode, MessageType } from '../../protocol/index.js'
import { wrapSends } from '../helpers/insides.js'
import { figure } from '../helpers/figures.js'

describe('revocation cuts open connections', function () {
  this.timeout(30000)
  const h = harness()
  const cleanups = []
  afterEach(async () => {
    for (const f of cleanups.splice(0).reverse()) await f()
    await h.cleanup()
  })

  const cluster = newKeyPair()
  const alice = newKeyPair()
  const bob = newKeyPair()
  const carol = newKeyPair()
  const as = (k) => ({ clusterPublicKey: cluster.publicKey, secretKey: k.secretKey })

  const ended = [] // the ticks generators that ran their finally, by who
  async function * ticks (who, ctx) {
    try {
      for (let i = 0; ; i++) { yield i; await delay(20) } // a tick every 20 ms: the handler's pace
    } finally {
      ended.push({ who, aborted: ctx.signal.aborted })
    }
  }

  async function securedPeer () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-revoke-'))
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }))
    fs.writeFileSync(path.join(dir, 'alice.pub'), alice.publicKey + '\n')
    fs.writeFileSync(path.join(dir, 'bob.pub'), bob.publicKey + '\n')
    fs.writeFileSync(path.join(dir, 'carol.pub'), carol.publicKey + '\n')
    const p = await h.peer({ handlers: { echo: (x) => x, ticks }, security: { clusterKey: cluster.secretKey, allow: [dir] }, membership: { probeInterval: 100 } })
    return { p, dir }
  }

  /** Requests in a loop until stopped: { ok, failed, lastOkAt, stop() }. */
  function load (client) {
    const r = { ok: 0, failed: 0, lastOkAt: 0, codes: {}, running: true }
    r.done = (async () => {
      while (r.running) {
        try { await client.request('echo', 'x', { timeout: 1500 }); r.ok++; r.lastOkAt = Date.now() } catch (err) { r.failed++; r.codes[err.code] = (r.codes[err.code] ?? 0) + 1 }
        await delay(5) // a request every 5 ms or so: the load's pace
      }
    })()
    r.stop = async () => { r.running = false; await r.done }
    return r
  }

  it('a removed key\'s open connection gets no answer within a second of the change; another client loses nothing and is never disconnected', async () => {
    const { p, dir } = await securedPeer()
    const a = h.client({ seeds: p.endpoint, security: as(alice), maxAttempts: 1 })
    const b = h.client({ seeds: p.endpoint, security: as(bob) })
    await a.request('echo', 1)
    await b.request('echo', 1)
    await eventually(() => expect(p.stats().security.keys.proven).to.equal(2))
    const la = load(a)
    const lb = load(b)
    await eventually(() => { expect(la.ok).to.be.above(5); expect(lb.ok).to.be.above(5) })
    let bDown = 0
    b.on('peer', (e) => { if (e.state === 'down') bDown++ })
    const t0 = Date.now()
    fs.rmSync(path.join(dir, 'alice.pub')) // picked up by the peer without a signal
    await eventually(() => expect(p.stats().security.keys.cut).to.equal(1), { timeout: 3000 })
    const cutAfter = Date.now() - t0
    // Bob's load goes on past the cut (what alice had in flight at the cut has settled by then),
    // and then for as long again: alice gets no answer in that window.
    const bobAtCut = lb.ok
    await eventually(() => expect(lb.ok).to.be.above(bobAtCut + 50), { timeout: 5000 })
    const okAt = la.ok
    await eventually(() => expect(lb.ok).to.be.above(bobAtCut + 200), { timeout: 5000 })
    await la.stop()
    await lb.stop()
    figure(`cut ${cutAfter} ms after the file went; alice ${okAt} ok then ${la.ok - okAt}, bob ${lb.ok} ok ${lb.failed} failed`)
    expect(cutAfter).to.be.below(2500) // the 1 s poll, and the cut at once
    expect(la.ok - okAt).to.equal(0) // nothing answered after the cut
    expect(la.lastOkAt - t0).to.be.below(2500)
    expect(lb.failed).to.equal(0)
    expect(lb.ok).to.be.above(100)
    expect(bDown).to.equal(0) // bob's connection was never closed
    expect(p.stats().security.keys.resets).to.equal(0)
  })

  it('a removed key\'s streams end with its connection: the generator\'s finally runs on the peer, the client\'s stream fails coded with its count; another client\'s stream goes on', async () => {
    ended.length = 0
    const { p, dir } = await securedPeer()
    const a = h.client({ seeds: p.endpoint, security: as(alice) })
    const b = h.client({ seeds: p.endpoint, security: as(bob) })
    await a.request('echo', 1)
    await b.request('echo', 1)
    await eventually(() => expect(p.stats().security.keys.proven).to.equal(2))
    const read = (client, who, idleTimeout) => {
      const r = { items: 0, err: null }
      r.done = (async () => {
        try {
          for await (const i of client.stream('ticks', who, { idleTimeout })) { r.items = i + 1; if (who === 'bob' && r.stop) break }
        } catch (err) { r.err = err }
      })()
      return r
    }
    const ra = read(a, 'alice', 500) // a tick every 20 ms: silent for 500 ms, it is cut off
    const rb = read(b, 'bob', 1500)
    await eventually(() => expect(ra.items).to.be.above(5))
    fs.rmSync(path.join(dir, 'alice.pub'))
    await p.reloadAllowList() // at once, not at its next look at the files (the first test shows that look)
    await eventually(() => expect(p.stats().streams.cut).to.equal(1), { timeout: 3000 })
    await eventually(() => expect(ended).to.deep.equal([{ who: 'alice', aborted: true }])) // alice's generator ended with the cut (at its next await); bob's runs on
    const bobAtCut = rb.items
    await ra.done
    expect(ra.err).to.include({ code: 'ERR_ZEROMESH_TIMEOUT' }) // nothing more came: the idle timeout, never a hang
    expect(ra.err.items).to.equal(ra.items)
    expect(rb.items).to.be.above(bobAtCut + 20) // bob's stream went on the whole time
    rb.stop = true
    await rb.done
    expect(rb.err).to.equal(null)
    await eventually(() => expect(ended.map((e) => e.who)).to.deep.equal(['alice', 'bob']))
    expect(p.stats().streams.open).to.equal(0)
  })

  it('a KEY_PROOF with a wrong mac, or without a challenge, proves nothing', async () => {
    const { p } = await securedPeer()
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 2000, curveServerKey: cluster.publicKey, curvePublicKey: alice.publicKey, curveSecretKey: alice.secretKey })
    cleanups.push(() => s.close())
    s.connect(p.endpoint)
    await s.send(encodeKeyProof(z85Decode(alice.publicKey), Buffer.alloc(32, 1))) // no challenge yet
    await s.send(encodePing(1))
    const pong = decode((await s.receive())[0])
    expect(pong.meta.ch).to.have.length(16)
    await s.send(encodeKeyProof(z85Decode(alice.publicKey), Buffer.alloc(32, 2))) // wrong mac
    await eventually(() => expect(p.stats().security.keys.badProofs).to.equal(2))
    expect(p.stats().security.keys.proven).to.equal(0)
  })

  it('a connection that never proved its key (an older client) is reached by closing every connection: it gets no answer after, the others reconnect and carry on', async () => {
    const { p, dir } = await securedPeer()
    const b = h.client({ seeds: p.endpoint, security: as(bob) })
    await b.request('echo', 1)
    // alice, as an older client: requests without ever proving her key
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 1000, sendTimeout: 500, curveServerKey: cluster.publicKey, curvePublicKey: alice.publicKey, curveSecretKey: alice.secretKey })
    cleanups.push(() => s.close())
    s.connect(p.endpoint)
    await s.send(encodeRequest([[1, 'echo', 'old', 5000]]))
    expect(decode((await s.receive())[0]).replies[0].value).to.equal('old')
    const lb = load(b)
    await eventually(() => expect(lb.ok).to.be.above(5))
    fs.rmSync(path.join(dir, 'alice.pub'))
    await p.reloadAllowList() // at once, not at its next look at the files (the first test shows that look)
    await eventually(() => expect(p.stats().security.keys.resets).to.equal(1), { timeout: 3000 })
    const bobAtReset = lb.ok
    await eventually(() => expect(lb.ok).to.be.above(bobAtReset + 10), { timeout: 5000 }) // bob is back: the peer bound again
    await s.send(encodeRequest([[2, 'echo', 'after', 5000]])).catch(() => {})
    let answer = null
    try { answer = await s.receive() } catch (err) { expect(err.code).to.equal('EAGAIN') }
    expect(answer).to.equal(null)
    const bobAfter = lb.ok
    await eventually(() => expect(lb.ok).to.be.above(bobAfter + 20), { timeout: 5000 })
    await lb.stop()
    expect(lb.failed, JSON.stringify(lb.codes)).to.equal(0) // idempotent requests fail over the reconnect
    await eventually(() => expect(p.stats().security.keys.proven).to.equal(1)) // bob proved again on his new connection
  })

  // Issue 49, item 3: a connection that pinged and read the member list but never asked for
  // work, and never proved its key, used to be answered after its key was revoked.
  it('an idle connection that never proved its key gets no answer after a revocation, while members keep gossiping and nobody is disconnected', async () => {
    const { p, dir } = await securedPeer()
    const q = await h.peer({ handlers: { echo: (x) => x }, security: { clusterKey: cluster.secretKey, allow: [dir] }, seeds: [p.endpoint], membership: { probeInterval: 100 } })
    await eventually(() => expect(p.members().filter((m) => m.state === 'alive')).to.have.length(2))
    const b = h.client({ seeds: p.endpoint, security: as(bob) })
    await b.request('echo', 1)
    // alice: pings and reads the member list, proves nothing, asks for no work.
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 1000, sendTimeout: 500, curveServerKey: cluster.publicKey, curvePublicKey: alice.publicKey, curveSecretKey: alice.secretKey })
    cleanups.push(() => s.close())
    s.connect(p.endpoint)
    await s.send(encodePing(1))
    expect(decode((await s.receive())[0]).type).to.equal(MessageType.PONG)
    await s.send(encodeMembersGet(2))
    expect(decode((await s.receive())[0]).type).to.equal(MessageType.MEMBERS)
    fs.rmSync(path.join(dir, 'alice.pub'))
    await p.reloadAllowList()
    const rounds = (x) => x.stats().membership
    const at = { p: rounds(p), q: rounds(q) } // the members' probe rounds from the revocation on
    await s.send(encodeRequest([[3, 'echo', 'after', 5000]])).catch(() => {})
    let answer = null
    try { answer = await s.receive() } catch (err) { expect(err.code).to.equal('EAGAIN') }
    expect(answer, 'no answer after the revocation').to.equal(null)
    await s.send(encodePing(4)).catch(() => {})
    try { answer = await s.receive() } catch (err) { expect(err.code).to.equal('EAGAIN') }
    expect(answer, 'not even a PONG').to.equal(null)
    const keys = p.stats().security.keys
    expect(keys.cutUnproven).to.be.at.least(1)
    expect(keys.resets, 'no connection closed').to.equal(0)
    // The member and the proven client go on: ten probe rounds each way since, none suspected.
    await eventually(() => {
      expect(rounds(p).probes).to.be.at.least(at.p.probes + 10)
      expect(rounds(q).probes).to.be.at.least(at.q.probes + 10)
    }, { timeout: 10000 })
    expect([rounds(p).suspected, rounds(q).suspected]).to.deep.equal([at.p.suspected, at.q.suspected])
    expect(p.members().find((m) => m.endpoint === q.endpoint).state).to.equal('alive')
    expect(q.members().find((m) => m.endpoint === p.endpoint).state).to.equal('alive')
    expect(await b.request('echo', 2)).to.equal(2)
  })

  it('a key revoked while a reconnecting zeromesh client proves its own causes no reset: the client holds its requests until its proof is on its way', async () => {
    const { p, dir } = await securedPeer()
    const b = h.client({ seeds: p.endpoint, security: as(bob) })
    // The client's KEY_PROOF takes 300 ms to leave: the revocation comes inside that window.
    let proofs = 0
    wrapSends(b, (send) => (ep, frames, done) => {
      if (frames[0][4] !== MessageType.KEY_PROOF) return send(ep, frames, done)
      proofs++
      setTimeout(() => send(ep, frames, done), 300)
    })
    const answers = Promise.all(Array.from({ length: 5 }, (_, i) => b.request('echo', i, { timeout: 5000 })))
    await eventually(() => expect(proofs).to.equal(1), { timeout: 3000 })
    fs.rmSync(path.join(dir, 'carol.pub'))
    await p.reloadAllowList()
    expect(await answers).to.deep.equal([0, 1, 2, 3, 4])
    const keys = p.stats().security.keys
    expect(keys.resets, 'no connection closed').to.equal(0)
    expect(keys.proven).to.equal(1)
  })
})
