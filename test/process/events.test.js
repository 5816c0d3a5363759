// Events across processes (issue 58, item 6): a subscriber killed mid-handler, and a frozen one
// in a broadcast. Peers are `zeromesh peer` children serving test/fixtures/events-handlers.js,
// which logs each handler's run, with its process id, to a file of the test's.
import { expect } from 'chai'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'

const HANDLERS = fileURLToPath(new URL('../fixtures/events-handlers.js', import.meta.url))

describe('events across processes', function () {
  this.timeout(30000)
  const h = harness()
  let dir
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-events-')) })
  afterEach(async () => {
    await h.cleanup()
    await killAll()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const logLines = () => { try { return fs.readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n').filter(Boolean) } catch { return [] } }
  const peers = async (n) => {
    const env = { EVENTS_LOG: path.join(dir, 'log') }
    const first = await startPeer(['--handlers', HANDLERS, '--threads', '1'], { env })
    const rest = []
    for (let i = 1; i < n; i++) rest.push(await startPeer(['--handlers', HANDLERS, '--threads', '1', '--seeds', first.endpoint], { env }))
    return [first, ...rest]
  }

  it('a subscriber SIGKILLed mid-handler: the event is handled by another peer of its group, and the client counts the redelivery', async () => {
    const [a, b] = await peers(2)
    const c = h.client({ seeds: [a.endpoint, b.endpoint] })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(2))
    const published = c.publish('orders.placed', { n: 1, ms: 2000 }, { timeout: 10000 })
    await eventually(() => expect(logLines().filter((l) => l.startsWith('start'))).to.have.length(1))
    const first = Number(logLines()[0].split(' ')[1])
    const victim = [a, b].find((p) => p.pid === first)
    const survivor = [a, b].find((p) => p !== victim)
    process.kill(victim.pid, 'SIGKILL')
    const out = await published
    expect(out.delivered).to.deep.equal([{ group: 'billing', endpoint: survivor.endpoint }])
    const lines = logLines()
    expect(lines).to.include(`start ${victim.pid} 1`)
    expect(lines).to.not.include(`done ${victim.pid} 1`) // the first run never finished
    expect(lines).to.include(`done ${survivor.pid} 1`)
    expect(c.stats().events).to.include({ redelivered: 1 })
  })

  it('with nothing failing each event is handled once by its group; broadcast reports a frozen (SIGSTOP) member unreached within its deadline', async () => {
    const [a, b, d] = await peers(3)
    const c = h.client({ seeds: [a.endpoint] })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up' && p.service !== null)).to.have.length(3), { timeout: 10000 })
    await Promise.all(Array.from({ length: 50 }, (_, n) => c.publish('orders.placed', { n })))
    const done = logLines().filter((l) => l.startsWith('done')).map((l) => Number(l.split(' ')[2]))
    expect(done.sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 50 }, (_, n) => n)) // each once
    expect(c.stats().events).to.include({ redelivered: 0 })
    process.kill(d.pid, 'SIGSTOP')
    try {
      const t0 = Date.now()
      const out = await c.broadcast('cache.drop', 'user:42', { timeout: 1500 })
      const took = Date.now() - t0
      expect(out.delivered.map((x) => x.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
      expect(out.unreached.map((x) => x.endpoint)).to.deep.equal([d.endpoint])
      expect(out.failed).to.deep.equal([])
      expect(took).to.be.within(1400, 3000)
    } finally {
      process.kill(d.pid, 'SIGCONT')
    }
  })
})
