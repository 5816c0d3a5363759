// The one tracker of questions and their answers (transport/questions.js), on a virtual
// clock, and a peer's gossip on it (peer/gossip-transport.js, with a connector that records
// what it is given): an answer counts only from the endpoint asked, and one after its timeout
// is told apart from one never asked for.
import { expect } from 'chai'
import { Questions, Answer } from '../../transport/questions.js'
import { GossipTransport } from '../../peer/gossip-transport.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { encodeGossip, decode } from '../../protocol/codec.js'

function asker (o = {}) {
  const clock = new VirtualClock()
  const sent = [] // [endpoint, frame]
  const q = new Questions({ clock, send: (ep, frames, done) => { sent.push([ep, frames[0]]); done(o.fail?.(ep) ?? null) }, ...o })
  const ends = [] // [seq, answer] as each question ends
  const ask = (ep, timeout = 100) => { let seq; q.ask(ep, (s) => `frame ${seq = s}`, timeout, (answer) => ends.push([seq, answer])); return seq }
  return { clock, sent, q, ends, ask }
}

describe('questions (transport/questions.js)', () => {
  it('an answer ends its question only when it comes from the endpoint asked', () => {
    const { q, sent, ends, ask } = asker()
    const seq = ask('a')
    expect(sent).to.deep.equal([['a', `frame ${seq}`]])
    expect(q.answer('b', seq, 'from b')).to.equal(Answer.STRAY)
    expect(q.answer('a', seq + 1, 'unasked')).to.equal(Answer.NONE)
    expect(ends).to.deep.equal([])
    expect(q.answer('a', seq, 'from a')).to.equal(Answer.TAKEN)
    expect(q.answer('a', seq, 'again')).to.equal(Answer.NONE)
    expect(ends).to.deep.equal([[seq, 'from a']])
  })

  it('a question ends with null at its timeout, on a failed send, and when its endpoint is forgotten', async () => {
    const { clock, q, ends, ask } = asker({ fail: (ep) => ep === 'down' ? 'EHOSTUNREACH' : null })
    const timed = ask('a', 50)
    const failed = ask('down')
    const forgotten = ask('b', 1000)
    expect(ends).to.deep.equal([[failed, null]])
    expect(q.asking('b')).to.equal(true)
    q.forget('b')
    expect(q.asking('b')).to.equal(false)
    await clock.advance(49)
    expect(ends).to.have.length(2)
    await clock.advance(1)
    expect(ends).to.deep.equal([[failed, null], [forgotten, null], [timed, null]])
    expect(q.pending.size).to.equal(0)
  })

  it('with lateMemory, an answer after its timeout is LATE once, from the endpoint asked only; memory stays bounded', async () => {
    const { clock, q, ask } = asker({ lateMemory: 2 })
    const s1 = ask('a', 10)
    const s2 = ask('b', 10)
    const s3 = ask('c', 10)
    await clock.advance(10)
    expect(q.answer('a', s1, 'x')).to.equal(Answer.NONE) // pushed out by s3: only the last 2 are kept
    expect(q.answer('a', s2, 'x')).to.equal(Answer.NONE) // s2 was asked of b
    expect(q.answer('b', s2, 'x')).to.equal(Answer.LATE)
    expect(q.answer('b', s2, 'x')).to.equal(Answer.NONE) // once
    expect(q.answer('c', s3, 'x')).to.equal(Answer.LATE)
    expect(q.expired.size).to.equal(0)
  })

  it('without lateMemory, nothing is remembered', async () => {
    const { clock, q, ask } = asker()
    const seq = ask('a', 10)
    await clock.advance(10)
    expect(q.answer('a', seq, 'x')).to.equal(Answer.NONE)
    expect(q.expired.size).to.equal(0)
  })
})

describe("a peer's gossip on the tracker (peer/gossip-transport.js)", () => {
  const A = 'tcp://127.0.0.1:1001'
  const B = 'tcp://127.0.0.1:1002'

  function gossip () {
    const clock = new VirtualClock()
    const out = [] // [endpoint, seq]
    const late = [] // [endpoint, gossip]
    let h = null
    const g = new GossipTransport({
      limits: {},
      heartbeatInterval: 0,
      heartbeatTimeout: 0,
      clock,
      onDisconnect: () => {},
      onLate: (ep, m) => late.push([ep, m.type]),
      connector: (handlers) => {
        h = handlers
        return { connect: () => true, disconnect: () => {}, send: (ep, frames, done) => { out.push([ep, decode(frames[0]).seq]); done(null) }, close: async () => {} }
      },
    })
    const answer = (from, seq) => h.onMessage(from, [encodeGossip(seq, { type: 'ack', from, updates: [] })])
    return { clock, g, out, late, answer }
  }

  it('an ack from another member than the one probed is counted stray, not taken', async () => {
    const { g, out, answer } = gossip()
    const reply = g.request(A, { type: 'probe', from: B, target: A, updates: [] }, 100)
    const [[ep, seq]] = out
    expect(ep).to.equal(A)
    answer(B, seq)
    expect(g.counts.strayAnswers).to.equal(1)
    answer(A, seq)
    expect((await reply).type).to.equal('ack')
    await g.close()
  })

  it("an ack after the probe's timeout still reaches onLate, once, from the member probed", async () => {
    const { clock, g, out, late, answer } = gossip()
    const reply = g.request(A, { type: 'probe', from: B, target: A, updates: [] }, 100)
    await clock.advance(100)
    expect(await reply).to.equal(null)
    const [[, seq]] = out
    answer(B, seq) // not the member probed
    answer(A, seq)
    answer(A, seq)
    expect(late).to.deep.equal([[A, 'ack']])
    expect(g.counts.lateAnswers).to.equal(1)
    await g.close()
  })

  it('close ends the requests out with null', async () => {
    const { g } = gossip()
    const reply = g.request(A, { type: 'probe', from: B, target: A, updates: [] }, 100000)
    await g.close()
    expect(await reply).to.equal(null)
  })
})
