// A rolling restart under load: each of 3 peer processes in turn gets SIGTERM, exits, and a
// new one starts on the same port, while a client runs non-idempotent requests at
// concurrency 16. Nothing may fail and every peer must exit 0.
import { expect } from 'chai'
import { startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { startLoad } from '../helpers/load.js'
import { figure } from '../helpers/figures.js'

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
    figure(`${load.ok} requests through the restart of 3 peers, retries ${client.stats().retries}`)
    expect(load.failures).to.deep.equal([])
    expect(exits).to.deep.equal([{ code: 0, signal: null }, { code: 0, signal: null }, { code: 0, signal: null }])
  })
})
