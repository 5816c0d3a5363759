// The peer's table of client connections (peer/connections.js): one Connection per routing
// id, forgotten once it holds nothing, and bounded against a flood of new ones without ever
// dropping a connection whose work is under way.
import { expect } from 'chai'
import { ConnectionTable, connectionKey } from '../../peer/connections.js'

const zmqId = (n) => { const b = Buffer.alloc(5); b.writeUInt32BE(n, 1); return b } // as libzmq makes them

describe('the peer\'s connections (peer/connections.js)', () => {
  it('one Connection per routing id, keyed by the id\'s number (libzmq\'s ids) or its latin1 text', () => {
    const t = new ConnectionTable()
    const a = t.of(zmqId(7))
    expect(t.of(zmqId(7))).to.equal(a)
    expect(a.key).to.equal(7)
    expect(t.of(Buffer.from('tcp://127.0.0.1:5555')).key).to.equal('tcp://127.0.0.1:5555')
    expect(connectionKey(Buffer.from([1, 0, 0, 0, 7]))).to.equal('\x01\x00\x00\x00\x07') // not libzmq's form: by its text
    expect(t.size).to.equal(2)
  })

  it('sweep() forgets the connections that hold nothing, and keeps those with requests, streams or word of a key', () => {
    const t = new ConnectionTable()
    const kinds = {
      empty: () => {},
      requests: (c) => { c.requests = { running: null } },
      streams: (c) => { c.streams = new Map([[1, {}]]) },
      proven: (c) => { c.proven = 'KEY' },
      cut: (c) => { c.cut = true },
      member: (c) => { c.member = true },
      seen: (c) => { c.seen = true },
      asked: (c) => { c.askedAt = 5 },
      challenged: (c) => { c.challenge = Buffer.alloc(16) },
    }
    for (const [name, hold] of Object.entries(kinds)) hold(t.of(Buffer.from(name)))
    t.sweep()
    expect([...t.values()].map((c) => c.key).sort()).to.deep.equal(Object.keys(kinds).filter((k) => k !== 'empty').sort())
  })

  it('past its bound a new connection takes the place of the oldest idle one; connections with a running request or an open stream stay', () => {
    const t = new ConnectionTable({ max: 100 })
    const busy = t.of(zmqId(0))
    busy.requests = { running: { size: 1 } } // a request of it runs
    const streaming = t.of(zmqId(1))
    streaming.streams = new Map([[9, {}]])
    for (let i = 2; i < 10000; i++) t.of(zmqId(i))
    expect(t.size).to.equal(100)
    expect(t.of(zmqId(0))).to.equal(busy)
    expect(t.of(zmqId(1))).to.equal(streaming)
    expect(t.of(zmqId(9999)).key).to.equal(9999) // the newest are kept
  })

  it('clear() forgets every connection (the peer bound again: every connection closed)', () => {
    const t = new ConnectionTable()
    for (let i = 0; i < 10; i++) t.of(zmqId(i)).proven = 'KEY'
    t.clear()
    expect(t.size).to.equal(0)
  })
})
