// A zeromesh peer is a 10/FLP (Freelance) server: a Freelance client written against the
// zguide, addressing the server by its endpoint from a ROUTER, works unchanged.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'

async function flpClient (endpoint) {
  const s = new zmq.Router({ linger: 0, mandatory: true, receiveTimeout: 3000 })
  const ready = new Promise((resolve) => s.events.on('handshake', resolve))
  s.connect(endpoint)
  await ready
  return s
}

describe('10/FLP compatibility', () => {
  const h = harness()
  const sockets = []
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close()
    await h.cleanup()
  })

  it('the peer routing id is its endpoint; PING is answered PONG', async () => {
    const p = await h.peer()
    const s = await flpClient(p.endpoint)
    sockets.push(s)
    await s.send([p.endpoint, 'PING'])
    const [id, pong] = await s.receive()
    expect(id.toString()).to.equal(p.endpoint)
    expect(pong.toString()).to.equal('PONG')
    expect(p.stats().flpPings).to.equal(1)
  })

  it('a [control][body] request is echoed by default, control frame first', async () => {
    const p = await h.peer()
    const s = await flpClient(p.endpoint)
    sockets.push(s)
    await s.send([p.endpoint, 'seq-1', 'hello', 'world'])
    const [, control, ...body] = await s.receive()
    expect(control.toString()).to.equal('seq-1')
    expect(body.map(String)).to.deep.equal(['hello', 'world'])
  })

  it('a custom flpHandler answers FLP requests, sync or async, while zeromesh requests go on', async () => {
    const p = await h.peer({
      handlers: { echo: (a) => a },
      flpHandler: async (frames) => ['OK', `${frames.length} frames`],
    })
    const s = await flpClient(p.endpoint)
    sockets.push(s)
    await s.send([p.endpoint, Buffer.from([0, 0, 0, 7]), 'a', 'b'])
    const [, control, ...reply] = await s.receive()
    expect([...control]).to.deep.equal([0, 0, 0, 7])
    expect(reply.map(String)).to.deep.equal(['OK', '2 frames'])
    const c = h.client({ seeds: [p.endpoint] })
    expect(await c.request('echo', 'side by side')).to.equal('side by side')
  })

  it('an FLP message over maxMessageSize in all (ZeroMQ bounds frames, not messages) is dropped unanswered; one within it is echoed', async () => {
    const p = await h.peer({ maxMessageSize: 64 * 1024 })
    const s = await flpClient(p.endpoint)
    sockets.push(s)
    const frame = Buffer.alloc(40 * 1024, 0x61) // each frame within the limit
    await s.send([p.endpoint, 'big', frame, frame]) // 80 kB in all
    await s.send([p.endpoint, 'many', ...Array.from({ length: 2000 }, () => 'x')]) // more frames than maxBatch
    await s.send([p.endpoint, 'small', frame])
    const [, control, body] = await s.receive()
    expect(control.toString()).to.equal('small') // the first answer is to the third message
    expect(body.length).to.equal(frame.length)
    expect(p.stats()).to.include({ flpTooLarge: 2, flpRequests: 1 })
  })
})
