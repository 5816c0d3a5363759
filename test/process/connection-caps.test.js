// Caps on clients' handshakes with a secured peer (issue 24, item 6): connections per source
// address and in total, and handshakes a second per address, enforced at ZAP; holders of the
// cluster key are not capped. Logic with a fake clock and a made-up TCP table, then real
// CURVE sockets on 127.0.0.1 and other loopback addresses (127.0.0.2, 127.0.0.3).
import { expect } from 'chai'
import * as zmq from 'zeromq'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { newKeyPair } from '../../transport/keys.js'
import { ConnectionCaps, capDefaults } from '../../transport/connection-caps.js'
import { Peer } from '../../index.js'

describe('connection caps: the logic', () => {
  it('a token bucket per address: twice the rate at once, then the rate a second', () => {
    let t = 0
    const caps = new ConnectionCaps({ port: () => null, clock: { now: () => t }, handshakesPerSecond: 2 })
    const verdicts = Array.from({ length: 5 }, () => caps.admit('10.0.0.1'))
    expect(verdicts).to.deep.equal([null, null, null, null, 'handshake rate'])
    expect(caps.admit('10.0.0.2')).to.equal(null) // another address has its own bucket
    t = 500
    expect(caps.admit('10.0.0.1')).to.equal(null) // one token back after half a second
    expect(caps.admit('10.0.0.1')).to.equal('handshake rate')
  })

  it('connections per address and in total, from the TCP table plus the handshakes admitted since it was read', () => {
    let t = 0
    // The table read at a handshake already holds that connection (TCP is up first).
    const table = new Map([['10.0.0.1', 3], ['10.0.0.2', 1]])
    const caps = new ConnectionCaps({ port: () => 5555, clock: { now: () => t }, maxConnectionsPerAddress: 3, maxConnections: 5, established: () => new Map(table) })
    expect(caps.admit('10.0.0.1')).to.equal(null) // the 3rd from .1, in the table read now
    expect(caps.admit('10.0.0.1')).to.equal('too many connections from this address') // a 4th, since
    expect(caps.admit('10.0.0.3')).to.equal(null) // 5 in all now
    expect(caps.admit('10.0.0.4')).to.equal('too many connections')
    table.set('10.0.0.1', 2) // one hung up; this handshake's connection is in the table
    t = 300 // the table is read again
    expect(caps.admit('10.0.0.1')).to.equal(null)
    table.set('10.0.0.1', 4)
    t = 600
    expect(caps.admit('10.0.0.1')).to.equal('too many connections from this address')
  })

  it('the TCP table is read again only when the connections counted come within half of a cap (a read walks every socket of the machine)', () => {
    let t = 0
    let reads = 0
    const table = new Map([['10.0.0.1', 1]])
    const caps = new ConnectionCaps({ port: () => 5555, clock: { now: () => t }, maxConnectionsPerAddress: 100, maxConnections: 1000, handshakesPerSecond: 1e6, established: () => { reads++; return new Map(table) } })
    for (let i = 0; i < 400; i++) { t += 300; expect(caps.admit(`10.0.${i % 8}.2`)).to.equal(null) } // 400 in all, 50 an address
    expect(reads).to.equal(1) // far from both caps: counted, not read (every admission read it, 400 times)
    for (let i = 0; i < 200; i++) { t += 300; caps.admit('10.0.0.2') } // past half of its cap: read, which finds them gone
    expect(reads).to.be.within(2, 10)
    table.set('10.0.0.2', 60) // really held now: past half, so every admission reads
    const readEach = []
    for (let i = 0; i < 20; i++) { const was = reads; t += 300; caps.admit('10.0.0.2'); readEach.push(reads - was) }
    expect(readEach.slice(-10)).to.deep.equal(Array(10).fill(1)) // once it found them held, every one
    table.set('10.0.0.2', 101)
    t += 300
    expect(caps.admit('10.0.0.2')).to.equal('too many connections from this address') // still capped exactly
  })

  it('defaults, and checked options', () => {
    expect(capDefaults).to.deep.equal({ maxConnections: 4096, maxConnectionsPerAddress: 256, handshakesPerSecond: 64 })
    const cluster = newKeyPair()
    expect(() => new Peer({ security: { clusterKey: cluster.secretKey, maxConnectionsPerAddress: 0 } })).to.throw(/maxConnectionsPerAddress/)
    expect(() => new Peer({ security: { clusterKey: cluster.secretKey, handshakesPerSecond: 'lots' } })).to.throw(/handshakesPerSecond/)
  })
})

describe('connection caps on a secured peer (real CURVE handshakes)', function () {
  this.timeout(20000)
  const h = harness()
  afterEach(() => h.cleanup())

  const cluster = newKeyPair()
  const alice = newKeyPair()

  /** A raw CURVE socket with alice's key from `source`; resolves whether the peer answered a PING. */
  async function answered (endpoint, source) {
    const s = new zmq.Dealer({ linger: 0, receiveTimeout: 2000, curveServerKey: cluster.publicKey, curvePublicKey: alice.publicKey, curveSecretKey: alice.secretKey })
    h.track(s)
    s.connect(`tcp://${source}:0;${endpoint.slice('tcp://'.length)}`)
    await s.send(['PING'])
    try { await s.receive(); return true } catch { return false }
  }

  it('refuses a client address its connection past maxConnectionsPerAddress, and serves other addresses', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x }, security: { clusterKey: cluster.secretKey, allow: [alice.publicKey], maxConnectionsPerAddress: 2 } })
    const refused = []
    p.on('refused', (r) => refused.push(r))
    expect(await answered(p.endpoint, '127.0.0.2')).to.equal(true)
    expect(await answered(p.endpoint, '127.0.0.2')).to.equal(true)
    expect(await answered(p.endpoint, '127.0.0.2')).to.equal(false)
    await eventually(() => expect(refused.map((r) => [r.reason, r.address])).to.deep.include(['too many connections from this address', '127.0.0.2']))
    expect(await answered(p.endpoint, '127.0.0.1')).to.equal(true)
    const c = h.client({ seeds: p.endpoint, security: { clusterPublicKey: cluster.publicKey, secretKey: alice.secretKey } })
    expect(await c.request('echo', 'still served')).to.equal('still served')
    expect(p.stats().security.refused['too many connections from this address']).to.be.at.least(1)
  })

  it('refuses handshakes from one address past handshakesPerSecond (twice it at once), not a peer holding the cluster key', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x }, security: { clusterKey: cluster.secretKey, allow: [alice.publicKey], handshakesPerSecond: 2 } })
    const results = await Promise.all(Array.from({ length: 8 }, () => answered(p.endpoint, '127.0.0.3')))
    expect(results.filter(Boolean)).to.have.length.within(4, 5) // the burst of 4, and at most one more token
    expect(p.stats().security.refused['handshake rate']).to.be.at.least(3)
    // peers join whatever the rate: 3 more peers through this one, from the same address
    for (let i = 0; i < 3; i++) await h.peer({ handlers: {}, seeds: [p.endpoint], security: { clusterKey: cluster.secretKey, handshakesPerSecond: 1 } })
    await eventually(() => expect(p.members().filter((m) => m.state === 'alive')).to.have.length(4), { timeout: 8000 })
  })
})

describe('connection caps on the command line', () => {
  it('--max-connections and its kin need --cluster-key, and take whole numbers', async () => {
    const { execFile } = await import('node:child_process')
    const BIN = new URL('../../bin/zeromesh.js', import.meta.url).pathname
    const run = (args) => new Promise((resolve) => execFile(process.execPath, [BIN, 'peer', '--bind', 'tcp://127.0.0.1:0', ...args], { timeout: 10000 }, (err, stdout, stderr) => resolve({ code: err?.code ?? 0, stderr })))
    const plain = await run(['--max-connections-per-address', '2'])
    expect(plain.code).to.equal(2)
    expect(plain.stderr).to.include('--max-connections-per-address needs --cluster-key')
    const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const dir = mkdtempSync(`${tmpdir()}/zeromesh-caps-`)
    try {
      writeFileSync(`${dir}/cluster.key`, newKeyPair().secretKey, { mode: 0o600 })
      const bad = await run(['--cluster-key', `${dir}/cluster.key`, '--handshakes-per-second', 'many'])
      expect(bad.code).to.equal(2)
      expect(bad.stderr).to.include('--handshakes-per-second must be a whole number')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
