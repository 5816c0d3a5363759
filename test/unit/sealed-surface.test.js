// What users hold is the API and nothing of its insides (issue 64, item 3): a Peer and a
// Client expose their documented methods only; their parts (the socket's message switch, the
// call lifecycle, the mesh, the options) are out of reach, and insideOf(), zeromesh's own way
// in, is not exported by any entry of the package.
import { expect } from 'chai'
import { EventEmitter } from 'node:events'
import { Peer, Client } from '../../index.js'
import * as root from '../../index.js'
import * as peerEntry from '../../peer/index.js'
import * as clientEntry from '../../client/index.js'
import { insideOf as peerInside } from '../../peer/peer.js'
import { insideOf as clientInside } from '../../client/client.js'

const own = (cls) => Object.getOwnPropertyNames(cls.prototype).filter((n) => n !== 'constructor').sort()
const EMITTER_KEYS = Object.keys(new EventEmitter()).sort()

describe('a sealed surface', () => {
  it('a Peer has its API and nothing else', async () => {
    expect(own(Peer)).to.deep.equal(['broadcast', 'endpoint', 'members', 'publish', 'ready', 'reloadAllowList', 'serve', 'service', 'start', 'state', 'stats', 'stop', 'subscribe', 'unserve', 'unsubscribe', 'use'].sort())
    const p = new Peer({ bind: 'tcp://127.0.0.1:0', handlers: { echo: (x) => x } })
    try {
      await p.start()
      expect(Object.keys(p).sort()).to.deep.equal(EMITTER_KEYS)
      for (const inside of ['onMessage', 'options', 'dispatcher', 'transport', 'membership', 'intake', 'latency', 'counts']) expect(p[inside], inside).to.equal(undefined)
      expect(peerInside(p).endpoint).to.equal(p.endpoint) // zeromesh's own code still reaches it
    } finally {
      await p.stop()
    }
  })

  it('a Client has its API and nothing else', async () => {
    expect(own(Client)).to.deep.equal(['broadcast', 'close', 'deadline', 'describe', 'gather', 'howServed', 'members', 'peers', 'proxy', 'publish', 'request', 'serversOf', 'service', 'stats', 'stream', 'streaming', 'use', 'waitFor'].sort())
    const c = new Client({ seeds: ['tcp://127.0.0.1:1'] })
    try {
      expect(Object.keys(c).sort()).to.deep.equal(EMITTER_KEYS)
      for (const inside of ['send', 'calls', 'mesh', 'options', 'learn', 'openStream', 'latency']) expect(c[inside], inside).to.equal(undefined)
      expect(clientInside(c).options.seeds).to.deep.equal(['tcp://127.0.0.1:1'])
    } finally {
      await c.close()
    }
  })

  it('no entry of the package exports the way in', () => {
    for (const entry of [root, peerEntry, clientEntry]) {
      expect(Object.keys(entry)).to.not.include('insideOf')
      expect(Object.keys(entry)).to.not.include('observeLatency')
    }
    expect(() => peerInside({})).to.throw(TypeError)
    expect(() => clientInside(new Peer())).to.throw(TypeError)
  })
})
