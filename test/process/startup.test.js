// Start-up and shutdown as an operator meets them (issue 25, items 1, 5 and 6): a peer that
// cannot open its --http port fails before it binds or joins, with a coded error and exit 2;
// a second SIGTERM within a second of the first does not cut the drain short (`timeout` sends
// one to the child and one to its group); a misspelt ZEROMESH_* variable is warned about,
// with the name meant.
import { expect } from 'chai'
import net from 'node:net'
import { run, startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { rawAsker } from '../helpers/raw.js'
import { encodeRequest } from '../../protocol/index.js'
import { Peer } from '../../index.js'
import { spawn } from 'node:child_process'

describe('zeromesh peer: start-up and shutdown', function () {
  this.timeout(30000)
  const h = harness()
  let held = null
  afterEach(async () => {
    held?.close()
    held = null
    await h.cleanup()
    await killAll()
  })

  it('a Client or Peer that refuses its options holds nothing open: the process exits on its own (a socket made first kept it alive for ever)', async () => {
    const code = `
      import { Client, Peer } from ${JSON.stringify(new URL('../../index.js', import.meta.url).href)}
      const bad = [
        () => new Client({ seeds: ['tcp://127.0.0.1:5555'], strategy: 'fastest' }),
        () => new Client({ seeds: ['tcp://127.0.0.1:5555'], timeout: 0 }),
        () => new Peer({ handlers: { a: 1 } }),
      ]
      for (const f of bad) { try { f(); console.log('made') } catch (err) { console.log(err.code) } }`
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d) => { out += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    const [exit, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])))
    clearTimeout(timer)
    expect(out.trim().split('\n')).to.deep.equal(['ERR_ZEROMESH_INVALID_ARGUMENT', 'ERR_ZEROMESH_INVALID_ARGUMENT', 'ERR_ZEROMESH_INVALID_ARGUMENT'])
    expect({ exit, signal }, 'exited on its own within 5 s').to.deep.equal({ exit: 0, signal: null })
  })

  it('an --http port in use: exit 2 with a coded error before the peer binds or joins (it printed no endpoint)', async () => {
    held = net.createServer()
    await new Promise((resolve) => held.listen(0, '127.0.0.1', resolve))
    const port = held.address().port
    const p = run(['peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--http', `127.0.0.1:${port}`])
    const { code } = await p.exited
    expect(code).to.equal(2)
    expect(p.stdout).to.equal('')
    expect(p.stderr).to.match(new RegExp(`ERR_ZEROMESH_INVALID_ARGUMENT: cannot listen on --http 127\\.0\\.0\\.1:${port}: address in use`))
  })

  it('a second SIGTERM during the drain of the first: the drain still runs, the request in flight finishes, exit 0', async () => {
    const p = await startPeer(['--threads', '1'])
    const c = h.client({ seeds: [p.endpoint] })
    const slow = c.request('sleep', { ms: 600 }, { idempotent: false })
    await eventually(() => expect(p.stderr).to.not.equal('')) // the peer is up and logging
    // The request is running: the load the peer reports in a reply to another caller (PROTOCOL.md 4.2).
    const raw = rawAsker()
    try {
      await eventually(async () => expect((await raw.ask(p.endpoint, encodeRequest([[1, 'notServed', null, 1000]]))).msg.meta.load).to.equal(1))
    } finally {
      raw.close()
    }
    process.kill(p.pid, 'SIGTERM')
    await eventually(() => expect(p.stderr).to.match(/SIGTERM: draining/)) // the first is heard
    process.kill(p.pid, 'SIGTERM')
    expect(await slow).to.deep.equal({ slept: 600 })
    expect((await p.exited).code).to.equal(0)
    expect(p.stderr).to.match(/SIGTERM again within 1 s of the first: ignored \(the drain goes on\)/)
  })

  it('a misspelt ZEROMESH_ variable is warned about, with the known name nearest to it', async () => {
    const p = await startPeer([], { env: { ZEROMESH_SEED: 'tcp://127.0.0.1:9', ZEROMESH_DRAIN_TIMOUT: '100' } })
    await eventually(() => {
      expect(p.stderr).to.match(/unknown environment variable ZEROMESH_SEED: did you mean ZEROMESH_SEEDS\?/)
      expect(p.stderr).to.match(/unknown environment variable ZEROMESH_DRAIN_TIMOUT: did you mean ZEROMESH_DRAIN_TIMEOUT\?/)
    })
  })

  it('a handlers module that is not there is named by its path, resolved against the working directory (issue 25, item 4)', async () => {
    for (const threads of [0, 1]) {
      const p = new Peer({ handlers: './nothere-mod.mjs', threads })
      const err = await p.start().then(() => null, (e) => e)
      expect(err?.code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
      expect(err.message).to.include(`no such file: ${process.cwd()}/nothere-mod.mjs (a relative path is taken from the working directory`)
      expect(err.message).to.not.include('imported from')
    }
  })
})
