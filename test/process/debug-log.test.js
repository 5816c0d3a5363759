// --log-level debug tells an operator what a peer is doing (issue 25, item 3): joining,
// probing a member that stopped answering, suspecting it and declaring it dead, refusing
// claims and requests with the reason, slow handlers, and its drain. At info, none of it.
import { expect } from 'chai'
import zmq from 'zeromq'
import { encodeRequest } from '../../protocol/codec.js'
import { startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'

const debugLines = (p) => p.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((l) => l.level === 'debug' || l.level === 20).map((l) => l.msg)

describe('--log-level debug', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  it('says what the peer does: joins, probes, suspicion and death of a killed member, refusals, slow handlers, its drain', async () => {
    const a = await startPeer(['--threads', '1', '--log-level', 'debug'])
    const c = h.client({ seeds: [a.endpoint] })
    // The slow request goes to a while a is the only member: with b up, the client may pick b.
    await c.request('sleep', { ms: 1100 }, { idempotent: false })
    const b = await startPeer(['--threads', '1', '--seeds', a.endpoint])
    await eventually(async () => expect((await c.members(a.endpoint)).filter((m) => m.state === 'alive')).to.have.length(2), { timeout: 5000 })
    // A caller that does not know what the peer serves (a hand-written client) asks for "nope".
    const raw = new zmq.Dealer({ linger: 0 })
    raw.connect(a.endpoint)
    await raw.send(encodeRequest([[1, 'nope', null, 1000]]))
    await raw.receive()
    raw.close()
    process.kill(b.pid, 'SIGKILL')
    await eventually(() => {
      const lines = debugLines(a)
      expect(lines.some((m) => new RegExp(`no ack from ${b.endpoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} within \\d+ ms`).test(m)), 'indirect probes').to.equal(true)
      expect(lines.some((m) => m.startsWith(`probes of ${b.endpoint} went unanswered`)), 'suspect').to.equal(true)
      expect(lines.some((m) => m.startsWith(`suspicion of ${b.endpoint}`) && m.endsWith(': dead')), 'dead').to.equal(true)
    }, { timeout: 10000 })
    const lines = debugLines(a)
    expect(lines.some((m) => /^slow handler: sleep took 1\d{3} ms$/.test(m)), 'slow handler').to.equal(true)
    expect(lines).to.include('refused a request for nope: unknown method')
    process.kill(a.pid, 'SIGTERM')
    expect((await a.exited).code).to.equal(0)
    expect(debugLines(a).some((m) => /^in-flight requests finished after \d+ ms$/.test(m)), 'drain').to.equal(true)
    expect(debugLines(b)).to.deep.equal([]) // info: not a debug line
  })
})
