// A stream's frames leave in order and are never dropped while the pipe is only full
// (transport/ordered-sender.js), on a scripted pipe and a virtual clock.
import { expect } from 'chai'
import { OrderedSender } from '../../transport/ordered-sender.js'
import { VirtualClock } from '../../testing/virtual-clock.js'

/** A pipe that takes `room` messages, then answers EAGAIN until drained; `code` forces an answer. */
function pipe () {
  const p = { taken: [], room: Infinity, code: null, calls: 0 }
  p.send = (frames, done) => {
    p.calls++
    let code = p.code
    if (code === null && p.room <= 0) code = 'EAGAIN'
    if (code === null) { p.room--; p.taken.push(frames[0].toString()) }
    queueMicrotask(() => done(code))
  }
  return p
}

const settle = () => new Promise(setImmediate)

describe('ordered sender', () => {
  it('a full pipe holds the head and everything behind it; they leave in order once it drains, none lost', async () => {
    const clock = new VirtualClock()
    const p = pipe()
    p.room = 2
    let drained = 0; const failed = []
    const out = new OrderedSender({ send: p.send, clock, giveUpMs: 1000, onFail: (c) => failed.push(c), onDrain: () => drained++ })
    for (let i = 0; i < 6; i++) out.push(Buffer.from(`f${i}`))
    await settle()
    expect(p.taken).to.deep.equal(['f0', 'f1'])
    expect(out.bytes).to.equal(8) // f2..f5 held
    await clock.advance(50)
    expect(p.taken).to.deep.equal(['f0', 'f1']) // still full: tried again, nothing overtakes f2
    p.room = Infinity
    await clock.advance(10)
    expect(p.taken).to.deep.equal(['f0', 'f1', 'f2', 'f3', 'f4', 'f5'])
    expect(out.bytes).to.equal(0)
    expect(drained).to.be.at.least(1)
    expect(failed).to.deep.equal([])
  })

  it('a pipe full past giveUpMs, or any other error, fails it once and drops what it held; close() drops and stops', async () => {
    const clock = new VirtualClock()
    const p = pipe()
    p.room = 0
    const failed = []
    const out = new OrderedSender({ send: p.send, clock, giveUpMs: 100, onFail: (c) => failed.push(c) })
    out.push(Buffer.from('a')); out.push(Buffer.from('b'))
    await clock.advance(99)
    expect(failed).to.deep.equal([])
    await clock.advance(10)
    expect(failed).to.deep.equal(['EAGAIN'])
    expect(out.bytes).to.equal(0)
    out.push(Buffer.from('c'))
    p.room = Infinity
    await clock.advance(10)
    expect(p.taken).to.deep.equal([]) // nothing after a failure

    const q = pipe()
    q.code = 'EHOSTUNREACH'
    const failed2 = []
    const out2 = new OrderedSender({ send: q.send, clock, giveUpMs: 100, onFail: (c) => failed2.push(c) })
    out2.push(Buffer.from('x'))
    await settle()
    expect(failed2).to.deep.equal(['EHOSTUNREACH'])

    const r = pipe()
    r.room = 0
    const out3 = new OrderedSender({ send: r.send, clock, giveUpMs: 100, onFail: () => { throw new Error('not after close') } })
    out3.push(Buffer.from('y'))
    await settle()
    out3.close()
    const calls = r.calls
    await clock.advance(500)
    expect(r.calls).to.equal(calls) // no more tries
  })
})
