// Security from the command line, as real child processes: keygen, a secured pair of peers
// and clients with and without keys, keys from the environment, the allow-list read again
// on SIGHUP, and the refusal to run plain off loopback.
import { expect } from 'chai'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { run, startPeer, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { isKeyText, publicKeyOf } from '../../transport/keys.js'

describe('security from the command line', function () {
  this.timeout(30000)
  let dir
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-keys-')) })
  afterEach(async () => {
    await killAll()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const keygen = async (name) => {
    const c = run(['keygen', path.join(dir, name)])
    expect((await c.exited).code, c.stderr).to.equal(0)
    return { key: path.join(dir, `${name}.key`), pub: path.join(dir, `${name}.pub`), publicKey: c.stdout.trim() }
  }
  const request = async (args) => {
    const c = run(['request', ...args])
    await c.exited
    return c
  }

  it('keygen writes PREFIX.key (0600) and PREFIX.pub, one Z85 line each, and never overwrites', async () => {
    const k = await keygen('cluster')
    const secret = fs.readFileSync(k.key, 'utf8')
    const pub = fs.readFileSync(k.pub, 'utf8')
    expect(secret).to.match(/^.{40}\n$/)
    expect(pub).to.equal(k.publicKey + '\n')
    expect(isKeyText(secret.trim()) && isKeyText(pub.trim())).to.equal(true)
    expect(publicKeyOf(secret.trim())).to.equal(pub.trim())
    expect(fs.statSync(k.key).mode & 0o777).to.equal(0o600)
    const again = run(['keygen', path.join(dir, 'cluster')])
    expect((await again.exited).code).to.equal(2)
    expect(again.stderr).to.match(/exists; keygen never overwrites/)
    expect(fs.readFileSync(k.key, 'utf8')).to.equal(secret)
    const help = run(['keygen', '--help'])
    await help.exited
    expect(help.stdout).to.match(/PREFIX\.key\s+the secret key/).and.match(/PREFIX\.pub\s+the public key/)
  })

  it('a secured pair of peers serves a client with an allowed key; without keys the client fails at the handshake (exit 1)', async () => {
    const cluster = await keygen('cluster')
    const alice = await keygen('alice')
    const a = await startPeer(['--cluster-key', cluster.key, '--allow', alice.pub])
    const b = await startPeer(['--cluster-key', cluster.key, '--allow', dir, '--seeds', a.endpoint])
    expect(a.stderr).to.match(/secured: CURVE with cluster key .*, 1 client key allowed/)
    const members = run(['members', '--seeds', b.endpoint, '--json', '--cluster-pub', cluster.pub, '--key', alice.key])
    await members.exited
    await eventually(async () => {
      const m = run(['members', '--seeds', b.endpoint, '--json', '--cluster-pub', cluster.pub, '--key', alice.key])
      expect((await m.exited).code, m.stderr).to.equal(0)
      expect(JSON.parse(m.stdout).map((x) => x.state)).to.deep.equal(['alive', 'alive'])
    }, { timeout: 10000, interval: 300 })
    const ok = await request(['--seeds', a.endpoint, '--cluster-pub', cluster.pub, '--key', alice.key, 'echo', '"hi"'])
    expect(ok.code, ok.stderr).to.equal(0)
    expect(JSON.parse(ok.stdout)).to.equal('hi')
    const plain = await request(['--seeds', a.endpoint, '--timeout', '3000', 'echo', '1'])
    expect(plain.code).to.equal(1)
    expect(plain.stderr).to.match(/^ERR_ZEROMESH_HANDSHAKE: .*runs CURVE/)
    const stranger = await keygen('stranger')
    const refused = await request(['--seeds', a.endpoint, '--cluster-pub', cluster.pub, '--key', stranger.key, 'echo', '1'])
    expect(refused.code).to.equal(1)
    expect(refused.stderr).to.match(/^ERR_ZEROMESH_HANDSHAKE: .*not on the peer's allow-list/)
    await eventually(() => expect(a.stderr).to.match(new RegExp(`refused a handshake: key not allowed \\(key ${stranger.publicKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\) from 127\\.0\\.0\\.1`)))
  })

  it('keys come from the environment too (ZEROMESH_CLUSTER_KEY, ZEROMESH_ALLOW, ZEROMESH_CLUSTER_PUB, ZEROMESH_KEY)', async () => {
    const cluster = await keygen('cluster')
    const alice = await keygen('alice')
    const text = (f) => fs.readFileSync(f, 'utf8').trim()
    const p = run(['peer', '--bind', 'tcp://127.0.0.1:0'], { env: { ZEROMESH_CLUSTER_KEY: text(cluster.key), ZEROMESH_ALLOW: alice.publicKey, ZEROMESH_DEMO_HANDLERS: 'true' } })
    await eventually(() => expect(p.stdout).to.include('\n'))
    const endpoint = p.stdout.trim()
    const c = run(['request', '--seeds', endpoint, 'echo', '7'], { env: { ZEROMESH_CLUSTER_PUB: cluster.publicKey, ZEROMESH_KEY: text(alice.key) } })
    expect((await c.exited).code, c.stderr).to.equal(0)
    expect(c.stdout.trim()).to.equal('7')
  })

  it('SIGHUP reads the allow-list again: a client key dropped into the directory gets in', async () => {
    const cluster = await keygen('cluster')
    fs.mkdirSync(path.join(dir, 'allowed'))
    const p = await startPeer(['--cluster-key', cluster.key, '--allow', path.join(dir, 'allowed')])
    const bob = await keygen('bob')
    const before = await request(['--seeds', p.endpoint, '--cluster-pub', cluster.pub, '--key', bob.key, 'echo', '1'])
    expect(before.code).to.equal(1)
    fs.copyFileSync(bob.pub, path.join(dir, 'allowed', 'bob.pub'))
    process.kill(p.pid, 'SIGHUP')
    await eventually(() => expect(p.stderr).to.match(/allow-list read again, 1 client key allowed/))
    const after = await request(['--seeds', p.endpoint, '--cluster-pub', cluster.pub, '--key', bob.key, 'echo', '2'])
    expect(after.code, after.stderr).to.equal(0)
    fs.writeFileSync(path.join(dir, 'allowed', 'junk.pub'), 'junk\n')
    process.kill(p.pid, 'SIGHUP')
    await eventually(() => expect(p.stderr).to.match(/allow-list NOT changed/))
  })

  it('refuses to run plain off loopback before binding anything, unless --insecure; flags that do not go together are usage errors', async () => {
    const cluster = await keygen('cluster')
    const other = await keygen('other')
    fs.copyFileSync(other.pub, path.join(dir, 'mixed.pub'))
    fs.copyFileSync(cluster.key, path.join(dir, 'mixed.key'))
    for (const args of [['peer', '--bind', 'tcp://0.0.0.0:0'], ['peer', '--advertise', 'tcp://10.9.8.7:5555'], ['request', '--seeds', 'tcp://10.9.8.7:5555', 'echo']]) {
      const c = run(args)
      expect((await c.exited).code, args.join(' ')).to.equal(2)
      expect(c.stderr).to.match(/not loopback.*--insecure/s)
    }
    for (const args of [
      ['peer', '--insecure', '--cluster-key', cluster.key],
      ['peer', '--allow', cluster.pub],
      ['request', '--seeds', 'tcp://127.0.0.1:9', '--cluster-pub', cluster.pub, 'echo'],
      ['peer', '--cluster-key', cluster.pub], // a public key where the secret one goes
      ['peer', '--cluster-key', path.join(dir, 'missing.key')],
      ['peer', '--cluster-key', path.join(dir, 'mixed.key')], // not the secret key of the .pub beside it
      ['request', '--seeds', 'tcp://127.0.0.1:9', '--cluster-pub', cluster.key, '--key', other.key, 'echo'],
    ]) {
      const c = run(args)
      expect((await c.exited).code, args.join(' ')).to.equal(2)
      expect(c.stderr.length).to.be.greaterThan(0)
    }
  })
})
