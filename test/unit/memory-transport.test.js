// The in-memory transport (transport/memory.js) behaves as the ZeroMQ connector does where the
// tests and simulations standing on it rely on it: what is sent before a connection is up waits
// for it, and heartbeats are the connector's own (protocol PINGs), so a connection from which
// nothing comes, for whatever reason, is taken down and dialled again.
import { expect } from 'chai'
import { MemoryNetwork } from '../../transport/memory.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { encodePing, encodePong, decode } from '../../protocol/codec.js'
import { MessageType } from '../../protocol/constants.js'

const EP = 'tcp://127.0.0.1:7001'

/** A listener on host `name` that answers every PING with a PONG and records everything else. */
function pinged (net, name = 'server') {
  const got = []
  const l = net.host(name).listener({
    bind: EP,
    onMessage: (id, frames) => {
      const msg = decode(frames[0])
      got.push(msg)
      if (msg.type === MessageType.PING) l.send(id, [encodePong(msg.seq, { mv: 0, inc: 1, st: 0 })])
    },
  })
  l.bind()
  return got
}

function connector (net, o = {}) {
  const events = []
  const c = net.host('client').connector({
    onUp: (ep) => events.push(['up', ep]),
    onDown: (ep) => events.push(['down', ep]),
    onMessage: (ep, frames) => events.push(['message', decode(frames[0]).type]),
    ...o,
  })
  return { c, events }
}

describe('the in-memory transport', () => {
  it('keeps what is sent before the connection is up, and delivers it in order once it is (ZeroMQ with immediate off)', async () => {
    const clock = new VirtualClock()
    const net = new MemoryNetwork({ clock, random: () => 0.5, delay: 1 })
    const got = pinged(net)
    const { c, events } = connector(net)
    c.connect(EP)
    const codes = []
    for (const seq of [1, 2, 3]) c.send(EP, [encodePing(seq)], (code) => codes.push(code))
    await clock.advance(0)
    expect(codes).to.deep.equal([null, null, null])
    expect(got).to.deep.equal([])
    await clock.advance(5)
    expect(events).to.deep.equal([['up', EP], ['message', MessageType.PONG], ['message', MessageType.PONG], ['message', MessageType.PONG]])
    expect(got.map((m) => m.seq)).to.deep.equal([1, 2, 3])
    c.send('tcp://127.0.0.1:7999', [encodePing(4)], (code) => codes.push(code)) // never connected
    await clock.advance(0)
    expect(codes[3]).to.equal('EHOSTUNREACH')
    await c.close()
  })

  it('a listener that closes (a peer that stops) delivers what it sent before the connection goes down; a killed host\'s is lost', async () => {
    for (const [how, want] of [['close', [['up', EP], ['message', MessageType.PONG], ['down', EP]]], ['kill', [['up', EP], ['down', EP]]]]) {
      const clock = new VirtualClock()
      const net = new MemoryNetwork({ clock, random: () => 0.5, delay: 1 })
      const server = net.host('server')
      const l = server.listener({ bind: EP, onMessage: (id) => { l.send(id, [encodePong(1, { mv: 0, inc: 1, st: 0 })]); if (how === 'close') l.close(); else server.kill() } })
      l.bind()
      const { c, events } = connector(net)
      c.connect(EP)
      c.send(EP, [encodePing(1)], () => {})
      await clock.advance(10)
      expect(events, how).to.deep.equal(want)
      await c.close()
    }
  })

  it('a connection whose messages are held back by retransmissions past heartbeatTimeout is taken down and dialled again; PONGs are not passed on', async () => {
    const clock = new VirtualClock()
    let lossy = false
    // Every draw under the loss: with loss on, each message is lost again and again (TCP backs
    // off to a minute and more), so the connection carries nothing in time, as a partition.
    const net = new MemoryNetwork({ clock, random: () => (lossy ? 0 : 0.99), delay: 1 })
    pinged(net)
    const { c, events } = connector(net, { heartbeatInterval: 100, heartbeatTimeout: 300 })
    c.connect(EP)
    await clock.advance(1000)
    expect(events).to.deep.equal([['up', EP]]) // PINGs and PONGs went both ways, none passed on
    net.host('server').loss = 0.5
    lossy = true
    await clock.advance(400) // 300 ms of silence, noticed within a quarter of the interval
    expect(events[1]).to.deep.equal(['down', EP])
    net.host('server').loss = 0
    lossy = false
    await clock.advance(1000)
    // A new connection, clear of the old one's backlog (one dialled while the loss lasted may
    // have come up and gone down the same way before it).
    expect(events.at(-1)).to.deep.equal(['up', EP])
    expect(events.filter(([e]) => e === 'message')).to.deep.equal([])
    await c.close()
  })
})
