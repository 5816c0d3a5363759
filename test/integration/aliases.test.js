// Reconnecting to an endpoint right after disconnecting from it, many times, over a real
// ROUTER: libzmq aborts the whole process (router.cpp `!has_out_pipe (routing_id)`) if a
// connect reuses the routing id of a pipe that still exists. A fresh alias per connect
// keeps the process alive; a crash here takes the test run down with it.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { Aliases, aliasNumber, connectingRouterOptions } from '../../transport/settings.js'
import { harness } from '../helpers/cluster.js'
import { encodeMembersGet, decode, MessageType } from '../../protocol/index.js'

describe('connect aliases', () => {
  const h = harness()
  let socket
  afterEach(async () => {
    socket?.close()
    await h.cleanup()
  })

  it('connect, send, disconnect, connect again 200 times: no abort, and the last connection works', async () => {
    const p = await h.peer()
    socket = new zmq.Router({ ...connectingRouterOptions({ maxMessageSize: 1 << 20 }), receiveTimeout: 3000 })
    const aliases = new Aliases()
    for (let i = 0; i < 200; i++) {
      expect(aliases.connect(socket, p.endpoint)).to.equal('connected')
      socket.send([aliases.aliasOf(p.endpoint), encodeMembersGet(i)]).catch(() => {})
      if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve))
      expect(aliases.disconnect(socket, p.endpoint)).to.equal(true)
    }
    aliases.connect(socket, p.endpoint)
    await socket.send([aliases.aliasOf(p.endpoint), encodeMembersGet(999)])
    for (;;) {
      const [id, frame] = await socket.receive()
      const msg = decode(frame)
      expect(msg.type).to.equal(MessageType.MEMBERS)
      if (msg.seq !== 999) continue // answers to earlier connections may still arrive
      expect(aliases.endpointOf(id)).to.equal(p.endpoint)
      expect(msg.members.map((m) => m.endpoint)).to.deep.equal([p.endpoint])
      break
    }
  })

  it('aliases are unique per connection and map back to their endpoint', () => {
    const a = new Aliases()
    const fake = { connect () {}, disconnect () {}, closed: false }
    a.connect(fake, 'tcp://127.0.0.1:1')
    const first = a.aliasOf('tcp://127.0.0.1:1')
    expect(a.connect(fake, 'tcp://127.0.0.1:1')).to.equal('already')
    a.disconnect(fake, 'tcp://127.0.0.1:1')
    a.connect(fake, 'tcp://127.0.0.1:1')
    const second = a.aliasOf('tcp://127.0.0.1:1')
    expect(second.toString()).to.equal('tcp://127.0.0.1:1#2')
    expect(first.toString()).to.equal('tcp://127.0.0.1:1#1')
    expect(a.endpointOf(Buffer.from(first))).to.equal('tcp://127.0.0.1:1')
    expect(a.endpointOf(Buffer.from(second))).to.equal('tcp://127.0.0.1:1')
  })

  // Received routing ids are only ever ours: libzmq names a connected pipe by the
  // ZMQ_CONNECT_ROUTING_ID it was made with, never by what the peer announces. So n and the
  // length are checked, not every byte.
  it('a routing id with an n or a length not ours maps to no endpoint', () => {
    const a = new Aliases()
    const fake = { connect () {}, disconnect () {}, closed: false }
    a.connect(fake, 'tcp://127.0.0.1:1') // alias n = 1
    a.connect(fake, 'tcp://127.0.0.1:22') // alias n = 2
    expect(a.endpointOf(Buffer.from('tcp://127.0.0.1:22#2'))).to.equal('tcp://127.0.0.1:22')
    for (const id of ['tcp://127.0.0.1:12#1', 'tcp://127.0.0.1:1#3', 'tcp://127.0.0.1:1#', 'tcp://127.0.0.1:1', '#1x', '', '1', `x#${'9'.repeat(16)}`]) {
      expect(a.endpointOf(Buffer.from(id)), id).to.equal(undefined)
    }
  })

  it('reads the n of "endpoint#n" from the bytes', () => {
    expect(aliasNumber(Buffer.from('tcp://127.0.0.1:5555#1'))).to.equal(1)
    expect(aliasNumber(Buffer.from('tcp://[::1]:5555#40960'))).to.equal(40960)
    expect(aliasNumber(Buffer.from(`#${'9'.repeat(15)}`))).to.equal(999999999999999)
    for (const id of ['', '#', 'abc', 'a#1b', '12', `#${'1'.repeat(16)}`]) expect(aliasNumber(Buffer.from(id)), id).to.equal(-1)
  })

  it('an endpoint ZeroMQ refuses is reported, never thrown, and leaves no alias behind', () => {
    socket = new zmq.Router(connectingRouterOptions({ maxMessageSize: 1 << 20 }))
    const a = new Aliases()
    for (const bad of ['garbage', 'tcp://127.0.0.1:abc', 'udp://127.0.0.1:5', `ipc:///tmp/${'x'.repeat(120)}`]) {
      expect(a.connect(socket, bad), bad).to.equal('refused')
      expect(a.has(bad)).to.equal(false)
      expect(a.aliasOf(bad)).to.equal(undefined)
    }
  })
})
