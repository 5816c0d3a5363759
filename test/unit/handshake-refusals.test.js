// Which failed handshakes the client takes as a refusal of its keys (client/refusals.js): once
// every peer known refused, requests fail at once with ERR_ZEROMESH_HANDSHAKE, so an overloaded
// peer must never read as one. Seen in the lab (bench/cluster/lab.js, 120 peers on 2 cores):
// peers whose ZAP answers came after their 2 s handshake timer hung up on every handshake, the
// clients took it as "the cluster public key is wrong", and 129,184 requests failed at once.
import { expect } from 'chai'
import { handshakeRefusal, SLOW_HANDSHAKE_MS } from '../../client/refusals.js'

const peer = () => ({ endpoint: 'tcp://10.0.0.1:5555', handshakeFailures: 0 })
const secured = { publicKey: 'K'.repeat(40) }

describe('handshake refusals (client/refusals.js)', () => {
  it('a hang-up within a round trip, twice in a row, is a refusal: the wrong cluster key', () => {
    const p = peer()
    expect(handshakeRefusal(p, { kind: 'other', code: 'EPIPE', elapsedMs: 2 }, secured)).to.equal(null)
    const r = handshakeRefusal(p, { kind: 'other', code: 'EPIPE', elapsedMs: 3 }, secured)
    expect(r.code).to.equal('ERR_ZEROMESH_HANDSHAKE')
    expect(r.message).to.match(/cluster public key is wrong/)
  })

  it('a hang-up when the peer\'s handshake timer ran out is never one, however often', () => {
    const p = peer()
    for (let i = 0; i < 10; i++) {
      expect(handshakeRefusal(p, { kind: 'other', code: 'EPIPE', elapsedMs: 2000 }, secured)).to.equal(null)
      expect(handshakeRefusal(p, { kind: 'other', code: 'ECONNRESET', elapsedMs: SLOW_HANDSHAKE_MS }, secured)).to.equal(null)
    }
    // ...and it breaks a run: a quick hang-up after one is the first of a new run.
    expect(handshakeRefusal(p, { kind: 'other', code: 'EPIPE', elapsedMs: 2 }, secured)).to.equal(null)
  })

  it('a refusal by the allow-list is one at once, whenever it came; an unknown time counts as quick', () => {
    expect(handshakeRefusal(peer(), { kind: 'auth', code: null, elapsedMs: 5000 }, secured).message).to.match(/not on the peer's allow-list/)
    const p = peer()
    handshakeRefusal(p, { kind: 'other', code: 'ECONNRESET' }, secured)
    expect(handshakeRefusal(p, { kind: 'other', code: 'ECONNRESET', elapsedMs: null }, secured)).to.not.equal(null)
  })
})
