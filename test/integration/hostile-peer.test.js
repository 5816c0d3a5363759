// A raw ZeroMQ socket throws garbage at a peer while a well-behaved client uses the same
// peer: the garbage is counted and dropped, the client sees no failure.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { seededRandom } from '../../testing/index.js'
import { Packr } from 'msgpackr'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { decode, MessageType, encodeRequest } from '../../protocol/index.js'

const packr = new Packr({ useRecords: false })
const header = (type, version = 1) => Buffer.from([0xa7, 0x5a, 0x4d, version, type])

/**
 * 300 malformed messages of many kinds. The junk is seeded: drawn afresh each run, a short
 * junk body was now and then a valid message (a signature, PING and `91 05` is PING [5], one
 * run in a few hundred), which the peer rightly answers instead of counting as malformed.
 */
function garbage () {
  const random = seededRandom(20261126)
  const randomBytes = (n) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
  const list = []
  for (let i = 0; i < 60; i++) list.push([randomBytes(1 + (i * 7) % 300)]) //                random frames
  for (let i = 0; i < 60; i++) list.push([Buffer.concat([header(1 + (i % 5)), randomBytes(1 + i)])]) // signature + junk
  for (let i = 0; i < 30; i++) list.push([Buffer.concat([header(1, 2 + i), packr.pack([[i, 'echo', 1, 0]])])]) // wrong version
  for (let i = 0; i < 30; i++) list.push([Buffer.concat([header(100 + i), packr.pack([i])])]) //  unknown type
  for (let i = 0; i < 30; i++) list.push([Buffer.concat([header(1), packr.pack({ shape: i })])]) // wrong shape
  for (let i = 0; i < 30; i++) list.push([Buffer.concat([header(1), Buffer.alloc(5000 + i, 0x91)])]) // deep nesting
  for (let i = 0; i < 30; i++) list.push([Buffer.concat([header(2), packr.pack([{}, [[i, 0, 'not for a peer']]])])]) // a reply sent to a peer
  for (let i = 0; i < 15; i++) list.push([Buffer.alloc(0)]) //                                 empty frame
  for (let i = 0; i < 15; i++) list.push([Buffer.from('PINGPONG'.slice(0, i % 8))]) //          near-FLP (2 are a real PING)
  return list
}

describe('hostile input against a running peer', function () {
  this.timeout(30000)
  const h = harness()
  const raws = []
  afterEach(async () => {
    for (const s of raws.splice(0)) s.close()
    await h.cleanup()
  })

  it('300 malformed messages and an 8 MB frame cause no failure for a good client', async () => {
    const p = await h.peer({ handlers: { echo: (a) => a } })
    const c = h.client({ seeds: [p.endpoint] })
    expect(await c.request('echo', 'warm')).to.equal('warm')

    let stop = false
    let ok = 0
    const failures = []
    const load = Promise.all(Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const v = { w, i }
          const out = await c.request('echo', v, { timeout: 2000 })
          if (out.w !== w || out.i !== i) failures.push(new Error(`wrong reply ${JSON.stringify(out)}`))
          else ok++
        } catch (err) {
          failures.push(err)
          if (err.code === 'ERR_ZEROMESH_CLOSED') return
        }
      }
    }))
    try {
      const raw = new zmq.Dealer({ linger: 0, sendTimeout: 1000 })
      raws.push(raw)
      raw.connect(p.endpoint)
      const bad = garbage()
      expect(bad).to.have.length(300)
      for (let i = 0; i < bad.length; i++) {
        await raw.send(bad[i])
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 1)) // interleave with the good load
      }
      await raw.send([Buffer.alloc(8 * 1024 * 1024, 0x41)]) // over maxMessageSize: the peer drops this connection

      await eventually(() => expect(p.stats()).to.include({ malformed: 298, flpPings: 2 }), { timeout: 10000 })
      // The raw socket's connection comes back and the peer still answers it properly.
      const raw2 = new zmq.Dealer({ linger: 0, sendTimeout: 1000, receiveTimeout: 3000 })
      raws.push(raw2)
      raw2.connect(p.endpoint)
      await raw2.send([encodeRequest([[77, 'echo', 'still here', 1000]])])
      const [reply] = await raw2.receive()
      expect(decode(reply).replies[0]).to.deep.include({ id: 77, value: 'still here' })
      const before = ok
      await eventually(() => expect(ok).to.be.at.least(before + 200)) // and the good client goes on
    } finally {
      stop = true
      await load
    }
    expect(failures.map((e) => e.message)).to.deep.equal([])
    expect(ok).to.be.greaterThan(300)
    expect(p.stats().protocolErrors).to.equal(60) // wrong versions and unknown types were told
  })

  it('a wrong protocol version is answered with an ERROR frame naming the versions accepted', async () => {
    const p = await h.peer({ handlers: { echo: (a) => a } })
    const raw = new zmq.Dealer({ linger: 0, receiveTimeout: 3000 })
    raws.push(raw)
    raw.connect(p.endpoint)
    await raw.send([Buffer.concat([header(1, 9), packr.pack([[1, 'echo', 1, 0]])])])
    const [frame] = await raw.receive()
    const msg = decode(frame)
    expect(msg).to.include({ type: MessageType.ERROR, code: 1, minVersion: 1, maxVersion: 1 })
    expect(msg.message).to.match(/version 9/)
  })
})
