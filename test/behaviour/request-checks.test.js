// What a request's checks refuse, in every world (test/helpers/worlds.js): bad arguments before
// sending, a request larger than the client's maxMessageSize before it is sent, a reply larger
// than the peer's as a coded error naming the real limit (and one just within it served),
// arguments nested deeper than a peer accepts; and the constructors' refusals.
import { expect } from 'chai'
import { WORLDS, failure } from '../helpers/worlds.js'
import { Peer, Client, ZeromeshError } from '../../index.js'

for (const W of WORLDS) {
  describe(`request checks (${W.name})`, function () {
    this.timeout(20000)
    let w
    beforeEach(() => { w = W.make() })
    afterEach(() => w.cleanup())

    const handlers = { echo: (x) => x, big: (args) => 'x'.repeat(args.n) }
    const code = async (promise) => (await failure(w, promise)).code

    it('bad arguments reject with ERR_ZEROMESH_INVALID_ARGUMENT, a misspelt option naming the one meant', async () => {
      const a = await w.peer({ handlers })
      const c = w.client({ seeds: [a.endpoint] })
      expect(await code(c.request(42))).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(await code(c.request(''))).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(await code(c.request('echo', 1, { timeout: -1 }))).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(await code(c.request('echo', 1, { timeout: 1.5 }))).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(await code(c.request('echo', 1, { idempotent: 'yes' }))).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(await code(c.request('echo', 1, { signal: {} }))).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      const err = await failure(w, c.request('echo', 1, { timeuot: 5 }))
      expect(err.code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(err.message).to.match(/unknown request options key "timeuot".*timeout/)
    })

    it('a request larger than maxMessageSize is refused before it is sent', async () => {
      const a = await w.peer({ handlers })
      const c = w.client({ seeds: [a.endpoint], maxMessageSize: 4096 })
      const err = await failure(w, c.request('echo', 'x'.repeat(5000)))
      expect(err.code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(err.message).to.match(/larger than maxMessageSize 4096/)
      expect(await w.settle(c.request('echo', 'x'.repeat(3000)))).to.have.length(3000)
    })

    it('a reply larger than maxMessageSize becomes a coded remote error, not a lost reply', async () => {
      const a = await w.peer({ handlers, maxMessageSize: 4096 })
      const c = w.client({ seeds: [a.endpoint] })
      const err = await failure(w, c.request('big', { n: 10000 }))
      expect([err.code, err.remoteCode]).to.deep.equal(['ERR_ZEROMESH_REMOTE', 'ERR_ZEROMESH_TOO_LARGE'])
      expect(await w.settle(c.request('big', { n: 100 }))).to.have.length(100)
    })

    it('the reply size error names the real limit, and a reply just within that limit gets through', async () => {
      const a = await w.peer({ handlers, maxMessageSize: 4096 })
      const c = w.client({ seeds: [a.endpoint] })
      const err = await failure(w, c.request('big', { n: 4090 }))
      expect(err.code).to.equal('ERR_ZEROMESH_REMOTE')
      const [, limit] = /larger than the (\d+) bytes a reply may take \(maxMessageSize 4096/.exec(err.message) ?? []
      expect(Number(limit)).to.be.within(4096 - 64, 4095)
      // An entry of a string of n characters takes n + at most 20 bytes (headers, id, status).
      expect(await w.settle(c.request('big', { n: Number(limit) - 20 }))).to.have.length(Number(limit) - 20)
    })

    it('args nested deeper than the peer accepts are refused as invalid', async () => {
      const a = await w.peer({ handlers })
      const c = w.client({ seeds: [a.endpoint] })
      let deep = 1
      for (let i = 0; i < 80; i++) deep = [deep]
      const err = await failure(w, c.request('echo', deep))
      expect(err.code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(err.message).to.match(/deeper than 64/)
    })
  })
}

describe('constructors', () => {
  it('refuse bad options with ERR_ZEROMESH_INVALID_ARGUMENT', () => {
    const bad = [
      () => new Client(),
      () => new Client({ seeds: [] }),
      () => new Client({ seeds: ['http://x'] }),
      () => new Client({ seeds: ['tcp://127.0.0.1:0'] }),
      () => new Client({ seeds: ['tcp://127.0.0.1:5555'], strategy: 'fastest' }),
      () => new Client({ seeds: ['tcp://127.0.0.1:5555'], timeout: 0 }),
      () => new Client({ seeds: ['tcp://127.0.0.1:5555'], seed: [] }),
      () => new Peer({ handlers: { a: 1 } }),
      () => new Peer({ handlers: [] }),
      () => new Peer({ bind: 'tcp://127.0.0.1:99999' }),
      () => new Peer({ maxInflight: 0 }),
      () => new Peer({ port: 5 }),
    ]
    for (const f of bad) {
      expect(f, f.toString()).to.throw(ZeromeshError).with.property('code', 'ERR_ZEROMESH_INVALID_ARGUMENT')
    }
  })
})
