// pm2 from the devDependencies runs examples/pm2/ecosystem.config.cjs (three peers) in a
// daemon of its own (PM2_HOME in a temporary directory), and the reload the example gives is
// run under non-idempotent load: no request fails, and at every moment at least one peer is
// up. Everything pm2 started is killed at the end, the daemon included.
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import net from 'node:net'
import { Client } from '../../index.js'
import { eventually } from '../helpers/eventually.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PM2 = path.join(ROOT, 'node_modules', 'pm2', 'bin', 'pm2')
const ECOSYSTEM = path.join(ROOT, 'examples', 'pm2', 'ecosystem.config.cjs')

/** A port free now on 127.0.0.1 (the kernel's pick), for the peers to bind. */
function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

describe('pm2 (examples/pm2): reload under load', function () {
  this.timeout(120000)
  let home
  let env
  const pm2 = (args, extra = {}) => new Promise((resolve, reject) => {
    execFile(process.execPath, [PM2, ...args], { env: { ...env, ...extra }, timeout: 90000 }, (err, stdout, stderr) => err ? reject(new Error(`pm2 ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout))
  })
  const pids = async () => JSON.parse(await pm2(['jlist'])).map((p) => p.pid).filter((pid) => pid > 0)

  before(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-pm2-'))
    const ports = [await freePort(), await freePort(), await freePort()]
    env = { ...process.env, PM2_HOME: home, ZEROMESH_PM2_PORTS: ports.join(',') }
  })

  after(async () => {
    let left = []
    try { left = await pids() } catch {}
    try { await pm2(['kill']) } catch {}
    for (const pid of left) { try { process.kill(pid, 'SIGKILL') } catch {} }
    fs.rmSync(home, { recursive: true, force: true })
  })

  it('PM2_CONCURRENT_ACTIONS=1 pm2 reload: 0 failed non-idempotent requests, a peer up at every moment, every peer replaced', async () => {
    await pm2(['start', ECOSYSTEM])
    const seeds = env.ZEROMESH_PM2_PORTS.split(',').map((p) => `tcp://127.0.0.1:${p}`)
    const client = new Client({ seeds, idempotent: false, timeout: 5000 })
    const before = new Set(await pids())
    expect(before.size).to.equal(3)
    let ok = 0
    const failures = []
    let stop = false
    // Which peers answer: each loop records who served it (whoami).
    const loop = async () => {
      while (!stop) {
        try { await client.request('whoami'); ok++ } catch (err) { failures.push(`${err.code}: ${err.message}`) }
      }
    }
    let minUp = Infinity
    let samples = 0
    let lowest = null // the client's view when the fewest peers were up
    const sampler = setInterval(() => {
      samples++
      const view = client.peers()
      const up = view.filter((p) => p.state === 'up').length
      if (up < minUp) { minUp = up; lowest = view.map((p) => `${p.endpoint.split(':').pop()} ${p.state}${p.lastError ? ` (${p.lastError})` : ''}`).join(', ') }
    }, 10)
    try {
      const allUp = () => expect(client.peers().filter((p) => p.state === 'up')).to.have.length(3)
      await eventually(allUp, { timeout: 10000 })
      minUp = Infinity
      const loops = Array.from({ length: 8 }, loop)
      const t0 = Date.now()
      await pm2(['reload', ECOSYSTEM], { PM2_CONCURRENT_ACTIONS: '1' })
      const reloadMs = Date.now() - t0
      const okAtReload = ok // the load goes on over the new processes, all of them known to the client
      await eventually(() => { allUp(); expect(ok).to.be.above(okAtReload + 100) }, { timeout: 10000 })
      stop = true
      await Promise.all(loops)
      const after = await pids()
      console.log(`      reload took ${reloadMs} ms; ${ok} requests, ${failures.length} failed; fewest peers up at once ${minUp} (${samples} samples): ${lowest}`)
      expect(failures).to.deep.equal([])
      expect(ok).to.be.above(100)
      expect(minUp).to.be.at.least(1)
      expect(after).to.have.length(3)
      for (const pid of after) expect(before.has(pid), `pid ${pid} is new`).to.equal(false)
    } finally {
      clearInterval(sampler)
      stop = true
      await client.close()
    }
  })
})
