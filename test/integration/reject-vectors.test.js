// What a receiver does with each reject vector (protocol/vectors.json, PROTOCOL.md sections 3
// and 4.5): each says who receives it (`receiver`) and what follows (`then`); these hold a real
// peer and a real client to it. A peer answers ERROR (with the vector's `errorCode`) only for a
// version or type it cannot handle, and drops every other malformed frame; both count it as
// malformed. A client drops what it cannot read and counts it.
import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { encodePing, decode, MessageType } from '../../protocol/index.js'

const rejects = JSON.parse(readFileSync(new URL('../../protocol/vectors.json', import.meta.url), 'utf8')).vectors
  .filter((v) => v.message.kind === 'reject')
  .map((v) => ({ ...v.message, id: v.id, bytes: Buffer.from(v.hex.replace(/ /g, ''), 'hex') }))

describe('the reject vectors, as a peer and a client take them', function () {
  this.timeout(15000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('every reject vector names its receiver and says what follows, in words that match its errorCode', () => {
    expect(rejects.length).to.be.at.least(12)
    for (const r of rejects) {
      expect(['peer', 'client'], r.id).to.include(r.receiver)
      if (r.errorCode !== undefined) expect(r.then, r.id).to.equal(`answered with ERROR ${r.errorCode}, and counted as malformed (stats().malformed)`)
      else expect(r.then, r.id).to.equal('dropped, and counted as malformed (stats().malformed)')
    }
  })

  it('a peer answers ERROR with the vector\'s code to those that have one, nothing to the others, and counts each', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x }, events: { 'cache.drop': () => {} } })
    const mine = rejects.filter((r) => r.receiver === 'peer')
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 3000 })
    try {
      s.connect(p.endpoint)
      const before = p.stats().malformed
      for (const r of mine) await s.send(r.bytes)
      await s.send(encodePing(77))
      const errors = []
      for (;;) {
        const m = decode((await s.receive())[0])
        if (m.type === MessageType.ERROR) errors.push(m.code)
        if (m.type === MessageType.PONG && m.seq === 77) break
      }
      expect(errors).to.deep.equal(mine.filter((r) => r.errorCode !== undefined).map((r) => r.errorCode))
      expect(p.stats().malformed - before).to.equal(mine.length)
    } finally {
      s.close()
    }
  })

  it('a client drops those sent to it and counts each', async () => {
    const fake = new zmq.Router({ linger: 0 })
    await fake.bind('tcp://127.0.0.1:0')
    try {
      const c = h.client({ seeds: [fake.lastEndpoint] })
      const [id] = await fake.receive() // the client's first question: who it is
      const mine = rejects.filter((r) => r.receiver === 'client')
      for (const r of mine) await fake.send([id, r.bytes])
      await eventually(() => expect(c.stats().malformed).to.equal(mine.length))
    } finally {
      fake.close()
    }
  })
})
