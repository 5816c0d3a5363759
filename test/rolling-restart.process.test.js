// A rolling restart under load: each of 3 peer processes in turn gets SIGTERM, exits, and a
// new one starts on the same port, while a client runs non-idempotent requests at
// concurrency 16. Nothing may fail and every peer must exit 0.
import { expect } from 'chai'
import { startPeer, killAll } from './helpers/processes.js'
import { harness } from './helpers/cluster.js'
import { eventually } from './helpers/eventually.js'
import { startLoad } from './helpers/load.js'

describe('rolling restart across peer processes', function () {
  this.timeout(90000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  it('SIGTERM and restart every peer in turn under load (idempotent: false): zero failed, every exit 0', async () => {
    const peers = [await startPeer(['--threads', '1'])]
    peers.push(await startPeer(['--threads', '1', '--seeds', peers[0].endpoint]))
    peers.push(await startPeer(['--threads', '1', '--seeds', peers[0].endpoint]))
    const client = h.client({ seeds: peers.map((p) => p.endpoint), idempotent: false, timeout: 5000 })
    await eventually(() => expect(client.peers().filter((p) => p.state === 'up')).to.have.length(3), { timeout: 5000 })

    const load = startLoad(16, () => client.request('sleep', { ms: 5 }))
    const exits = []
    try {
      await eventually(() => expect(load.ok).to.be.at.least(200), { timeout: 10000 })
      for (let i = 0; i < peers.length; i++) {
        const old = peers[i]
        process.kill(old.pid, 'SIGTERM')
        exits.push(await old.exited)
        peers[i] = await startPeer(['--threads', '1', '--bind', old.endpoint, '--seeds', peers[(i + 1) % peers.length].endpoint])
        const before = load.ok
        await eventually(() => expect(load.ok).to.be.at.least(before + 200), { timeout: 10000 })
      }
    } finally {
      await load.stop()
    }
    console.log(`      ${load.ok} requests through the restart of 3 peers, retries ${client.stats().retries}`)
    expect(load.failures).to.deep.equal([])
    expect(exits).to.deep.equal([{ code: 0, signal: null }, { code: 0, signal: null }, { code: 0, signal: null }])
  })

  it('a peer restarted after a long absence is dialled as soon as the lists show its new life, not after ZeroMQ\'s reconnect backoff', async () => {
    const a = await startPeer(['--threads', '0'])
    const b = await startPeer(['--threads', '0', '--seeds', a.endpoint])
    const client = h.client({ seeds: [a.endpoint, b.endpoint] })
    await eventually(() => expect(client.peers().filter((p) => p.state === 'up')).to.have.length(2), { timeout: 5000 })
    process.kill(b.pid, 'SIGKILL')
    await b.exited
    // Long enough for ZeroMQ's reconnect interval to grow to its 2 s ceiling.
    await new Promise((resolve) => setTimeout(resolve, 4000))
    const t0 = Date.now()
    await startPeer(['--threads', '0', '--bind', b.endpoint, '--seeds', a.endpoint])
    // A request now and then brings a's replies, whose membership digest makes the client
    // fetch the list that shows b's new incarnation.
    await eventually(async () => {
      await client.request('echo', 1)
      expect(client.peers().find((p) => p.endpoint === b.endpoint)?.state).to.equal('up')
    }, { timeout: 5000, interval: 20 })
    const ms = Date.now() - t0
    console.log(`      back in ${ms} ms after the restart (redials: ${client.stats().redials})`)
    expect(client.stats().redials).to.be.at.least(1)
  })
})
