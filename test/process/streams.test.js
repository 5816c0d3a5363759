// Streams against real `zeromesh peer` processes (issue 26): a peer killed or frozen mid-stream
// ends the stream with a coded error and its count within the client's detection time, the
// caller resumes elsewhere with a cursor, and a slow reader grows neither process's memory.
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { startPeer, killAll, rssOf, steadyRss } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { servingPeer } from '../helpers/insides.js'
import { figure } from '../helpers/figures.js'

const READER = fileURLToPath(new URL('../fixtures/stream-reader.mjs', import.meta.url))

describe('streams across processes', function () {
  this.timeout(60000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  for (const [how, signal] of [['killed (SIGKILL)', 'SIGKILL'], ['frozen (SIGSTOP, a partition as the client sees it)', 'SIGSTOP']]) {
    it(`a peer ${how} mid-stream ends it with ERR_ZEROMESH_CONNECTION_LOST and its count within the detection time; the caller resumes elsewhere from its cursor`, async () => {
      const a = await startPeer(['--threads', '1'])
      const b = await startPeer(['--threads', '1', '--seeds', a.endpoint])
      const c = h.client({ seeds: [a.endpoint, b.endpoint], discover: false })
      await c.waitFor('count')
      await eventually(() => expect(c.peers().filter((p) => p.state === 'up')).to.have.length(2))
      const got = []
      let victim = null
      let err = null
      const t0 = { at: 0 }
      try {
        for await (const item of c.stream('count', { n: 1000, ms: 5 }, { idleTimeout: 20000 })) {
          got.push(item.i)
          if (got.length === 20) {
            victim = servingPeer(c) // the peer serving this stream
            process.kill(victim === a.endpoint ? a.pid : b.pid, signal)
            t0.at = Date.now()
          }
        }
      } catch (e) {
        err = e
      }
      const took = Date.now() - t0.at
      expect(err, 'the stream failed').to.not.equal(null)
      expect(err.code).to.equal('ERR_ZEROMESH_CONNECTION_LOST')
      expect(err.items).to.equal(got.length)
      // Detection: the connection drops at once on a kill; a frozen peer misses the ZMTP
      // heartbeats for heartbeatTimeout (3 s).
      expect(took).to.be.below(signal === 'SIGKILL' ? 1500 : 6000)
      // Resume: the rest from the cursor, on the other peer.
      for await (const item of c.stream('count', { n: 1000, from: got.length })) got.push(item.i)
      expect(got).to.deep.equal(Array.from({ length: 1000 }, (_, i) => i))
    })
  }

  for (const threads of ['0', '1']) it(`a slow reader: 256 items of 1,000,000 bytes, 20 ms a read for the first 40, grow neither process by more than 96 MB (handlers on ${threads === '0' ? 'the main thread' : 'a thread'})`, async () => {
    const peer = await startPeer(['--threads', threads])
    const peerBefore = await steadyRss(peer.pid) // its baseline once it has settled
    let peerPeak = peerBefore
    const sampler = setInterval(() => { try { peerPeak = Math.max(peerPeak, rssOf(peer.pid)) } catch {} }, 10)
    const out = await runReader([peer.endpoint, 256, 1000000, 40, 20])
    clearInterval(sampler)
    const client = JSON.parse(out)
    const mb = (x) => Math.round(x / 1e6)
    figure(`peer ${mb(peerBefore)} -> peak ${mb(peerPeak)} MB; client ${mb(client.before)} -> peak ${mb(client.peak)} MB; ${client.items} items, ${mb(client.bytes)} MB`)
    expect(client.items).to.equal(256)
    expect(client.bytes).to.equal(256e6)
    expect(peerPeak - peerBefore).to.be.below(96e6)
    expect(client.peak - client.before).to.be.below(96e6)
  })
})

/** Runs the reader script (a process of its own, so its memory is its own) and resolves with its output; killed after 30 s. */
async function runReader (args) {
  const child = spawn(process.execPath, [READER, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''; let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d })
  const timer = setTimeout(() => child.kill('SIGKILL'), 30000)
  const code = await new Promise((resolve) => child.on('exit', resolve))
  clearTimeout(timer)
  if (code !== 0) throw new Error(`the reader exited ${code}: ${stderr}`)
  return stdout
}
