// A client sends one message whose frames never end (bench/cluster/barrage.js, "endless-message"):
// ZeroMQ bounds each frame and counts its queues in whole messages, so libzmq holds every
// frame until the message ends. Seen in the barrage: `zeromesh peer` at 1.1 GB and growing as
// fast as loopback carries it. With a memory limit the peer closes every connection before it
// is reached, lives on, and serves.
import { expect } from 'chai'
import { startPeer, killAll, rssOf } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { kinds } from '../../bench/cluster/barrage.js'
import { figure } from '../helpers/figures.js'

describe('the memory limit of a peer process', function () {
  this.timeout(60000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  it('a message of frames without end: past 80% of --memory-limit the peer closes every connection, stays below the limit, and serves', async () => {
    const limit = 400 * 1000 * 1000
    const peer = await startPeer(['--threads', '0', '--memory-limit', '400m', '--log-level', 'warn'])
    let peak = 0
    const sampler = setInterval(() => { try { peak = Math.max(peak, rssOf(peer.pid)) } catch {} }, 5)
    const what = await kinds['endless-message'](peer.endpoint)
    clearInterval(sampler)
    figure(`${what}; peer peak ${Math.round(peak / 1e6)} MB of a ${limit / 1e6} MB limit`)
    expect(peer.child.exitCode).to.equal(null)
    expect(peak).to.be.below(limit)
    expect(peer.stderr).to.match(/after a collection: closing every connection/)
    const c = h.client({ seeds: [peer.endpoint] })
    expect(await c.request('echo', 'still here')).to.equal('still here')
  })
})
