// Seeds from DNS against a real DNS server: dnsmasq (Debian's dnsmasq-base), started by this
// test on 127.0.0.1 and a free port, answering from a hosts file the test rewrites (dnsmasq
// reads it again on SIGHUP) and an SRV record. Peers bind 127.0.0.1, .2 and .3 (all loopback)
// on one port, as pods of a headless Service share a port. A joining peer and a client find
// peers by name, and a client picks up a new record without a restart.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { Resolver } from 'node:dns/promises'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import dgram from 'node:dgram'
import net from 'node:net'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'

const DNSMASQ = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'].find((f) => fs.existsSync(f))

/** A port free now for both UDP and TCP on 127.0.0.1 (the kernel's pick). */
async function freePort () {
  for (;;) {
    const port = await new Promise((resolve) => { const s = dgram.createSocket('udp4'); s.bind(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
    const free = await new Promise((resolve) => { const t = net.createServer(); t.once('error', () => resolve(false)); t.listen(port, '127.0.0.1', () => t.close(() => resolve(true))) })
    if (free) return port
  }
}

describe('seeds from DNS (dnsmasq)', function () {
  this.timeout(60000)
  const h = harness()
  let dir, hosts, dnsmasq, dnsPort, port
  const dns = () => ({ servers: [`127.0.0.1:${dnsPort}`], interval: 300, timeout: 1000 })
  const setHosts = (addresses) => {
    fs.writeFileSync(hosts, addresses.map((a, i) => `${a} peers.zeromesh.test peer${i + 1}.zeromesh.test`).join('\n') + '\n')
    process.kill(dnsmasq.pid, 'SIGHUP') // dnsmasq reads its hosts files again
  }

  before(async function () {
    if (DNSMASQ === undefined) throw new Error('dnsmasq is not installed: apt-get install dnsmasq-base (.ci/run does)')
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-dns-'))
    hosts = path.join(dir, 'hosts')
    fs.writeFileSync(hosts, '')
    dnsPort = await freePort()
    port = await freePort()
    dnsmasq = spawn(DNSMASQ, [
      '--keep-in-foreground', '--no-resolv', '--no-hosts', '--no-poll', `--conf-file=/dev/null`, '--pid-file=',
      '--user=root', '--bind-interfaces', '--listen-address=127.0.0.1', `--port=${dnsPort}`, '--local-ttl=0',
      `--addn-hosts=${hosts}`, `--srv-host=_zeromesh._tcp.zeromesh.test,peer1.zeromesh.test,${port}`, `--srv-host=_zeromesh._tcp.zeromesh.test,peer2.zeromesh.test,${port}`,
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    dnsmasq.stderr.on('data', (d) => { err += d })
    // Up once it answers a query for its SRV record.
    const resolver = new Resolver({ timeout: 200, tries: 1 })
    resolver.setServers([`127.0.0.1:${dnsPort}`])
    await eventually(async () => {
      if (dnsmasq.exitCode !== null) throw new Error(`dnsmasq exited: ${err}`)
      expect(await resolver.resolveSrv('_zeromesh._tcp.zeromesh.test')).to.have.length(2)
    }, { timeout: 5000, interval: 50 })
  })

  afterEach(() => h.cleanup())

  after(async () => {
    await h.cleanup()
    if (dnsmasq !== undefined && dnsmasq.exitCode === null) { dnsmasq.kill('SIGKILL'); await new Promise((resolve) => dnsmasq.once('exit', resolve)) }
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a joining peer and a client find peers by dns://NAME:PORT, and a client picks up a new record without a restart', async () => {
    setHosts(['127.0.0.1'])
    const a = await h.peer({ bind: `tcp://127.0.0.1:${port}`, seeds: [`dns://peers.zeromesh.test:${port}`], dns: dns() })
    const b = await h.peer({ bind: `tcp://127.0.0.2:${port}`, seeds: [`dns://peers.zeromesh.test:${port}`], dns: dns() })
    // b found a through DNS alone.
    await eventually(() => expect(b.members().filter((m) => m.state === 'alive').map((m) => m.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort()), { timeout: 5000 })
    setHosts(['127.0.0.1', '127.0.0.2'])
    // A client that learns only from DNS (no member lists): both records, then a third.
    const c = h.client({ seeds: [`dns://peers.zeromesh.test:${port}`], dns: dns(), discover: false })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up').map((p) => p.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort()), { timeout: 5000 })
    const third = await h.peer({ bind: `tcp://127.0.0.3:${port}`, seeds: [`dns://peers.zeromesh.test:${port}`], dns: dns() })
    setHosts(['127.0.0.1', '127.0.0.2', '127.0.0.3'])
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up').map((p) => p.endpoint)).to.include(third.endpoint), { timeout: 5000 })
    expect(third.members().filter((m) => m.state === 'alive')).to.have.length(3)
  })

  it('dns+srv:// finds peers by SRV record (targets resolved to addresses), mixed with a static endpoint', async () => {
    setHosts(['127.0.0.1', '127.0.0.2'])
    const p1 = await h.peer({ bind: `tcp://127.0.0.1:${port}`, handlers: { whoami: (_, ctx) => ctx.endpoint } })
    const p2 = await h.peer({ bind: `tcp://127.0.0.2:${port}`, handlers: { whoami: (_, ctx) => ctx.endpoint } })
    const other = await h.peer({ handlers: { whoami: (_, ctx) => ctx.endpoint } })
    const c = h.client({ seeds: ['dns+srv://_zeromesh._tcp.zeromesh.test', other.endpoint], dns: dns(), discover: false })
    await eventually(() => expect(c.peers().filter((p) => p.state === 'up').map((p) => p.endpoint).sort()).to.deep.equal([p1.endpoint, p2.endpoint, other.endpoint].sort()), { timeout: 5000 })
  })

  it('a name that does not resolve: the client waits (NO_PEERS at its deadline), and finds the peer once the record appears', async () => {
    setHosts([])
    const p = await h.peer({ bind: `tcp://127.0.0.1:${port}`, handlers: { ok: () => 'ok' } })
    const c = h.client({ seeds: [`dns://late.zeromesh.test:${port}`], dns: { ...dns(), interval: 0 }, timeout: 1500 })
    const err = await c.request('ok').catch((e) => e)
    expect(err.code).to.equal('ERR_ZEROMESH_NO_PEERS')
    fs.writeFileSync(hosts, `127.0.0.1 late.zeromesh.test\n`)
    process.kill(dnsmasq.pid, 'SIGHUP')
    // interval 0: only a request finding nothing reachable makes it resolve again
    await eventually(async () => expect(await c.request('ok')).to.equal('ok'), { timeout: 8000, interval: 200 })
    expect(p.endpoint).to.equal(`tcp://127.0.0.1:${port}`)
  })
})
