// The endpoint grammar (PROTOCOL.md 1.1) against ZeroMQ itself: whatever parseEndpoint
// accepts as connectable, a real socket's connect() accepts too, so no endpoint from the
// wire can make ZeroMQ throw inside a peer or a client. And every endpoint that killed a
// cluster in outside testing is refused, by the parser and by the decoder.
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { parseEndpoint, isWireEndpoint, normalizeRemote, normalizeEndpoint, bindSpec } from '../../protocol/endpoint.js'
import { encodeGossip, encodeMembers, decode } from '../../protocol/codec.js'
import { seededRandom } from '../../testing/random.js'

const killers = ['garbage', 'tcp://127.0.0.1:abc', 'udp://127.0.0.1:5', `ipc:///tmp/${'a'.repeat(110)}`, 'ipc://@']

describe('endpoint grammar', () => {
  const table = [
    // [input, normal form to connect to, or null when refused]
    ['tcp://127.0.0.1:5555', 'tcp://127.0.0.1:5555'],
    ['tcp://localhost:5555', 'tcp://127.0.0.1:5555'],
    ['tcp://peer-1.svc.cluster.local:5555', 'tcp://peer-1.svc.cluster.local:5555'],
    ['tcp://[::1]:5555', 'tcp://[::1]:5555'],
    ['ipc:///tmp/zeromesh.sock', 'ipc:///tmp/zeromesh.sock'],
    ['ipc://@abstract', 'ipc://@abstract'],
    [`ipc://${'a'.repeat(107)}`, `ipc://${'a'.repeat(107)}`],
    ['inproc://a', 'inproc://a'],
    [`ipc://${'a'.repeat(108)}`, null],
    ['garbage', null],
    ['tcp://127.0.0.1:abc', null],
    ['udp://127.0.0.1:5', null],
    ['tcp://999.1.1.1:5', null],
    ['tcp://1.2.3.4.5:6', null],
    ['tcp://a;b:5', null], //        a source address: not an endpoint of a peer
    ['tcp://a!b:5', null],
    ['tcp://-x:5', null],
    ['tcp://host_x:5', null],
    ['tcp://é:5', null],
    ['tcp://x:0', null],
    ['tcp://x:05', null],
    ['tcp://x:65536', null],
    ['tcp://x:*', null],
    ['tcp://*:5', null],
    ['tcp://0.0.0.0:5', null],
    ['tcp://[::]:5', null],
    ['tcp://[zz]:5', null],
    ['tcp://a\nb:5', null],
    ['tcp://:5', null],
    ['ipc://', null],
    ['ipc://@', null], //            found by the loop below: an empty abstract name
    ['', null],
    [`tcp://${'a.'.repeat(118)}b:1`, null], // over 240 bytes
  ]
  for (const [input, normal] of table) {
    it(`${JSON.stringify(input.length > 60 ? input.slice(0, 60) + '...' : input)} -> ${normal === null ? 'refused' : normal === input ? 'accepted' : normal}`, () => {
      const p = parseEndpoint(input)
      if (normal === null) {
        expect(p.error, 'a reason').to.be.a('string')
        expect(() => normalizeRemote(input, 'seeds[0]')).to.throw(/seeds\[0\].*use tcp:\/\/HOST:PORT/)
      } else {
        expect(p.endpoint).to.equal(normal)
        expect(isWireEndpoint(normal)).to.equal(true)
      }
    })
  }

  it('binding allows wildcards and port 0; connecting does not', () => {
    expect(bindSpec('tcp://0.0.0.0:0')).to.deep.equal({ bindTo: 'tcp://0.0.0.0:*', wildcardHost: true })
    expect(bindSpec('tcp://*:5555')).to.deep.equal({ bindTo: 'tcp://*:5555', wildcardHost: true })
    expect(bindSpec('tcp://[::]:0')).to.deep.equal({ bindTo: 'tcp://[::]:*', wildcardHost: true })
    expect(normalizeEndpoint('tcp://localhost:0', 'bind')).to.equal('tcp://127.0.0.1:0')
    expect(() => normalizeRemote('tcp://127.0.0.1:0', 'advertise')).to.throw(/port 0/)
  })

  it('the wire takes only the normal form: localhost must be written 127.0.0.1', () => {
    expect(isWireEndpoint('tcp://localhost:5555')).to.equal(false)
    expect(isWireEndpoint(42)).to.equal(false)
  })

  it('4000 near-endpoints: whatever the parser accepts, a real ZeroMQ connect() accepts too', () => {
    const random = seededRandom(13)
    const pick = (list) => list[Math.floor(random() * list.length)]
    const bits = ['tcp://', 'ipc://', 'inproc://', 'udp://', '127.0.0.1', 'localhost', '[::1]', '[fe80::1%lo]', 'a', '-', '.', ':', ';',
      '_', '!', '*', '5555', '0', '65536', '99999', '%', '@', '/', '[', ']', ' ', 'é', 'x'.repeat(60), '\n', '1.2.3.4']
    const socket = new zmq.Router({ linger: 0 })
    let accepted = 0
    try {
      for (let i = 0; i < 4000; i++) {
        let s = pick(['tcp://', 'tcp://', 'ipc://', 'inproc://', ''])
        const n = 1 + Math.floor(random() * 5)
        for (let j = 0; j < n; j++) s += pick(bits)
        if (random() < 0.6) s += ':' + pick(['1', '5555', '0', '65535', '65536', 'x', '*', '080'])
        const p = parseEndpoint(s)
        if (p.error !== undefined) continue
        accepted++
        expect(() => socket.connect(p.endpoint), p.endpoint).to.not.throw()
        socket.disconnect(p.endpoint)
      }
    } finally {
      socket.close()
    }
    expect(accepted).to.be.greaterThan(200) // the loop did test something
  })

  it('a claim, a from, a target or a member list naming any of the endpoints that crashed peers is refused by the decoder', () => {
    const good = 'tcp://127.0.0.1:5001'
    for (const bad of killers) {
      const claim = { endpoint: bad, incarnation: 1, state: 0, meta: {} }
      const frames = [
        encodeGossip(1, { type: 'sync', from: good, members: [claim] }),
        encodeGossip(1, { type: 'probe', from: good, target: good, updates: [claim] }),
        encodeGossip(1, { type: 'probe-req', from: good, target: bad, updates: [] }),
        encodeGossip(1, { type: 'probe', from: bad, target: good, updates: [] }),
        encodeGossip(1, { type: 'probe', from: good, target: good, updates: [{ ...claim, endpoint: good, state: 1, by: bad }] }),
        encodeMembers(1, 0, [claim]),
      ]
      for (const f of frames) expect(() => decode(f), bad).to.throw(/normal form/)
    }
  })
})
