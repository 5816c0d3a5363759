// Upgrading a cluster to services under load: peers and clients of the release before services
// (a checkout of commit BEFORE, taken with git archive into a temporary directory, using this
// checkout's node_modules) meet the new ones. Three old peers serve the demo handlers; an old
// client and a new one send non-idempotent requests at concurrency 8 each; each old peer in
// turn gets SIGTERM and a new peer starts on its port. Nothing may fail, on either client.
import { expect } from 'chai'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { startLoad } from '../helpers/load.js'

const BEFORE = '4ad5c40' // the last commit before services (peers that state nothing of what they serve)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The release before services, unpacked into a temporary directory. */
function checkoutBefore () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-before-'))
  const tar = execFileSync('git', ['archive', '--format=tar', BEFORE], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })
  execFileSync('tar', ['-x', '-C', dir], { input: tar })
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'))
  return dir
}

/** A `zeromesh peer` of the old release, as helpers/processes.js starts a new one. */
function startOldPeer (dir, args) {
  const child = spawn(process.execPath, [path.join(dir, 'bin/zeromesh.js'), 'peer', '--bind', 'tcp://127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  const c = { child, pid: child.pid, stdout: '', exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))) }
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d) => { c.stdout += d; if (c.stdout.includes('\n')) { c.endpoint = c.stdout.split('\n')[0].trim(); resolve(c) } })
    c.exited.then(({ code }) => reject(new Error(`old peer exited (${code}) before starting`)))
  })
}

describe('upgrading to services under load (old and new peers and clients)', function () {
  this.timeout(120000)
  const h = harness()
  let dir = null
  const old = []
  afterEach(async () => {
    await h.cleanup()
    for (const c of old) { try { process.kill(c.pid, 'SIGKILL') } catch {} }
    await killAll()
    if (dir !== null) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('old peers replaced by new ones one at a time, an old and a new client at work throughout: 0 failed', async () => {
    dir = checkoutBefore()
    const { Client: OldClient } = await import(pathToFileURL(path.join(dir, 'index.js')).href)
    const peers = [await startOldPeer(dir, ['--threads', '1'])]
    old.push(peers[0])
    for (let i = 0; i < 2; i++) { const p = await startOldPeer(dir, ['--threads', '1', '--seeds', peers[0].endpoint]); old.push(p); peers.push(p) }
    const seeds = peers.map((p) => p.endpoint)
    const oldClient = new OldClient({ seeds, idempotent: false, timeout: 5000 })
    const newClient = h.client({ seeds, idempotent: false, timeout: 5000 })
    await eventually(() => {
      expect(oldClient.peers().filter((p) => p.state === 'up')).to.have.length(3)
      expect(newClient.peers().filter((p) => p.state === 'up')).to.have.length(3)
    }, { timeout: 5000 })
    expect(newClient.peers().every((p) => p.service === 'any')).to.equal(true) // old peers state nothing

    const loads = [oldClient, newClient].map((c) => startLoad(8, (i) => i % 2 === 0 ? c.request('sleep', { ms: 5 }) : c.request('whoami')))
    const exits = []
    try {
      await eventually(() => expect(Math.min(...loads.map((l) => l.ok))).to.be.at.least(200), { timeout: 10000 })
      for (let i = 0; i < peers.length; i++) {
        const before = peers[i]
        process.kill(before.pid, 'SIGTERM')
        exits.push(await before.exited)
        peers[i] = await startPeer(['--threads', '1', '--bind', before.endpoint, '--seeds', peers[(i + 1) % peers.length].endpoint])
        const counts = loads.map((l) => l.ok)
        await eventually(() => loads.forEach((l, k) => expect(l.ok).to.be.at.least(counts[k] + 200)), { timeout: 10000 })
      }
      await eventually(() => expect(newClient.peers().filter((p) => p.service !== null && p.service !== 'any')).to.have.length(3), { timeout: 5000 })
    } finally {
      await Promise.all(loads.map((l) => l.stop()))
      await oldClient.close()
    }
    console.log(`      ${loads[0].ok} requests from the old client, ${loads[1].ok} from the new one, through the upgrade of 3 peers`)
    expect(loads[0].failures, 'old client').to.deep.equal([])
    expect(loads[1].failures, 'new client').to.deep.equal([])
    expect(exits).to.deep.equal([{ code: 0, signal: null }, { code: 0, signal: null }, { code: 0, signal: null }])
  })
})
