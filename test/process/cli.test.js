// The command line, run as real child processes: peers that start, serve, fail and stop
// the way peers really do (SIGTERM, SIGKILL), and `zeromesh request` as a user runs it.
import { expect } from 'chai'
import { run, startPeer, killAll } from '../helpers/processes.js'
import { harness } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { startLoad } from '../helpers/load.js'
import { rawAsker } from '../helpers/raw.js'
import { encodeRequest } from '../../protocol/index.js'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { eventsDigest, eventsElement } from '../../protocol/events.js'
import { streamsDigest, streamsElement } from '../../protocol/stream-methods.js'

// The label of the demo handlers' one subscription, cache.drop in its own group (PROTOCOL.md 4.11).
const DEMO_EVENTS = eventsDigest(eventsElement([['cache.drop', 'cache.drop']]))
const DEMO_STREAMS = streamsDigest(streamsElement(['count']))

describe('zeromesh command line', function () {
  this.timeout(30000)
  const h = harness()
  afterEach(async () => {
    await h.cleanup()
    await killAll()
  })

  it('--help prints usage and exits 0, for every command', async () => {
    for (const args of [['--help'], ['peer', '--help'], ['request', '--help']]) {
      const c = run(args)
      const { code } = await c.exited
      expect(code, args.join(' ')).to.equal(0)
      expect(c.stdout).to.match(/^usage: zeromesh/)
    }
  })

  it('bad usage exits 2 with a message on stderr', async () => {
    for (const args of [['frobnicate'], ['peer', '--bogus'], ['request', 'echo'], ['request', '--seeds', 'tcp://127.0.0.1:9', 'echo', '{bad json'], ['request', '--seeds', 'nonsense', 'echo']]) {
      const c = run(args)
      const { code } = await c.exited
      expect(code, args.join(' ')).to.equal(2)
      expect(c.stdout).to.equal('')
      expect(c.stderr.length).to.be.greaterThan(0)
    }
  })

  it('the rough edges a new user hit: bare command, --version, near-miss flags, negative numbers, one prefix, limits', async () => {
    const out = async (args) => { const c = run(args); const { code } = await c.exited; return { code, stdout: c.stdout, stderr: c.stderr } }
    const bare = await out([])
    expect(bare.code).to.equal(2)
    expect(bare.stderr).to.match(/a command is needed/)
    const version = await out(['--version'])
    expect(version).to.include({ code: 0, stdout: JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url))).version + '\n' })
    expect((await out(['peer', '--seed', 'tcp://127.0.0.1:9'])).stderr).to.match(/Unknown option '--seed'; did you mean --seeds\?/)
    expect((await out(['request', '--seeds', 'tcp://127.0.0.1:9', '--timout', '5', 'x'])).stderr).to.match(/did you mean --timeout\?/)
    const negative = await out(['peer', '--threads', '-1'])
    expect(negative.code).to.equal(2)
    expect(negative.stderr).to.match(/--threads must be a whole number, got "-1"/)
    const many = await out(['peer', '--threads', '1000'])
    expect(many.code).to.equal(2)
    expect(many.stderr).to.match(/^ERR_ZEROMESH_INVALID_ARGUMENT: threads must be a whole number from 0 to 256, got 1000/) // one prefix, not "...: zeromesh: ..."
  })

  it('a handlers module that does not load is named with file and line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-handlers-'))
    try {
      fs.writeFileSync(path.join(dir, 'typo.mjs'), 'export function a () { return 1 }\nexport const b = ;\n')
      fs.writeFileSync(path.join(dir, 'throws.mjs'), '\nthrow new Error("no config")\n')
      for (const threads of ['0', '1']) {
        const typo = run(['peer', '--handlers', path.join(dir, 'typo.mjs'), '--threads', threads])
        expect((await typo.exited).code).to.equal(2)
        expect(typo.stderr).to.include('SyntaxError: Unexpected token').and.include(` at ${path.join(dir, 'typo.mjs')}:2 (export const b = ;)`)
        const throws = run(['peer', '--handlers', path.join(dir, 'throws.mjs'), '--threads', threads])
        expect((await throws.exited).code).to.equal(2)
        expect(throws.stderr).to.include(`Error: no config at ${path.join(dir, 'throws.mjs')}:2:7`)
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('members asks the next seed when the first does not answer; an unknown method lists the methods there are', async () => {
    const p = await startPeer(['--threads', '0'])
    const m = run(['members', '--seeds', `tcp://127.0.0.1:9,${p.endpoint}`, '--timeout', '1000', '--json'])
    expect((await m.exited).code, m.stderr).to.equal(0)
    expect(JSON.parse(m.stdout).map((x) => x.endpoint)).to.deep.equal([p.endpoint])
    const u = run(['request', '--seeds', p.endpoint, 'nope'])
    expect((await u.exited).code).to.equal(1)
    expect(u.stderr).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD: no peer serves "nope"; the peers known serve count, echo, sleep, spin, whoami\n')
  })

  it('a peer serves the demo handlers; request prints the JSON result alone on stdout', async () => {
    const p = await startPeer()
    expect(p.endpoint).to.match(/^tcp:\/\/127\.0\.0\.1:\d+$/)
    const echo = run(['request', '--seeds', p.endpoint, 'echo', '{"a":[1,"two",null]}'])
    expect((await echo.exited).code).to.equal(0)
    expect(JSON.parse(echo.stdout)).to.deep.equal({ a: [1, 'two', null] })
    const who = run(['request', '--seeds', p.endpoint, 'whoami'])
    await who.exited
    expect(JSON.parse(who.stdout)).to.deep.equal({ endpoint: p.endpoint, pid: p.pid })
    const spin = run(['request', '--seeds', p.endpoint, 'spin', '{"n":1000}'])
    await spin.exited
    expect(JSON.parse(spin.stdout).n).to.equal(1000)
    const sleep = run(['request', '--seeds', p.endpoint, 'sleep', '{"ms":20}'])
    await sleep.exited
    expect(JSON.parse(sleep.stdout)).to.deep.equal({ slept: 20 })
    // A stream: each item a JSON line, as it comes (issue 26, item 8).
    const stream = run(['request', '--seeds', p.endpoint, '--stream', 'count', '{"n":4,"from":1}'])
    expect((await stream.exited).code).to.equal(0)
    expect(stream.stdout.trim().split('\n').map((l) => JSON.parse(l))).to.deep.equal([{ i: 1 }, { i: 2 }, { i: 3 }])
    const broken = run(['request', '--seeds', p.endpoint, '--stream', 'count', '{"n":-1}'])
    expect((await broken.exited).code).to.equal(1)
    expect(broken.stderr).to.match(/^ERR_ZEROMESH_REMOTE: count: n and from/)
  })

  it('without --handlers a peer serves nothing (it says so); the demo handlers need --demo-handlers', async () => {
    const bare = await startPeer([], { demo: false })
    const r = run(['request', '--seeds', bare.endpoint, 'spin', '{"n":1e10}'])
    expect((await r.exited).code).to.equal(1)
    expect(r.stderr).to.equal('ERR_ZEROMESH_UNKNOWN_METHOD: no peer serves "spin"; the peers known serve nothing\n')
    await eventually(() => expect(bare.stderr).to.match(/serves no methods: give --handlers MODULE \(or --demo-handlers for the demo's echo, whoami, spin, sleep and count\)/))
    const demo = await startPeer(['--demo-handlers'], { demo: false })
    const w = run(['request', '--seeds', demo.endpoint, 'whoami'])
    expect((await w.exited).code, w.stderr).to.equal(0)
    expect(JSON.parse(w.stdout).pid).to.equal(demo.pid)
    const both = run(['peer', '--demo-handlers', '--handlers', 'test/fixtures/orders.js'])
    expect((await both.exited).code).to.equal(2)
    expect(both.stderr).to.match(/--demo-handlers goes without --handlers/)
  })

  it('a failed request prints CODE: message on stderr and exits 1', async () => {
    const p = await startPeer()
    const c = run(['request', '--seeds', p.endpoint, 'nope'])
    expect((await c.exited).code).to.equal(1)
    expect(c.stdout).to.equal('')
    expect(c.stderr).to.match(/^ERR_ZEROMESH_UNKNOWN_METHOD: no peer serves "nope"/)
    const r = run(['request', '--seeds', p.endpoint, 'spin', '{"n":-1}'])
    expect((await r.exited).code).to.equal(1)
    expect(r.stderr).to.match(/^ERR_ZEROMESH_REMOTE: spin: n must be .*\(remote code BAD_N\)/)
    const dead = run(['request', '--seeds', 'tcp://127.0.0.1:9', '--timeout', '300', 'echo'])
    expect((await dead.exited).code).to.equal(1)
    expect(dead.stderr).to.match(/^ERR_ZEROMESH_NO_PEERS/)
  })

  it('--handlers loads a module of functions', async () => {
    const mod = 'data:text/javascript,export const add = ({ a, b }) => a + b; export default { neg: (x) => -x, note: "not a function" }'
    const p = await startPeer(['--handlers', mod])
    const c = run(['request', '--seeds', p.endpoint, 'add', '{"a":2,"b":3}'])
    await c.exited
    expect(c.stdout.trim()).to.equal('5')
    const n = run(['request', '--seeds', p.endpoint, 'neg', '4'])
    await n.exited
    expect(n.stdout.trim()).to.equal('-4')
    expect(p.stderr).to.match(/serving (add, neg|neg, add) on \d+ threads?"/)
    const none = run(['peer', '--handlers', 'data:text/javascript,export const x = 1'])
    expect((await none.exited).code).to.equal(2)
    expect(none.stderr).to.match(/exports no functions/)
  })

  it('services from the command line: several --handlers modules, --labels, --service-version; members shows them; request --version and --where pick', async () => {
    const orders = path.resolve('test/fixtures/orders.js')
    const a = await startPeer(['--handlers', `${orders},demo/handlers.js`, '--threads', '1', '--labels', 'zone=a,tier=gold', '--service-version', '2.1.0'])
    const b = await startPeer(['--seeds', a.endpoint, '--threads', '1', '--labels', 'zone=b', '--service-version', '1.0.0', '--capacity', '8'])
    await eventually(async () => {
      const m = run(['members', '--seeds', a.endpoint, '--json'])
      await m.exited
      const list = JSON.parse(m.stdout)
      expect(list).to.have.length(2)
      expect(list.find((x) => x.endpoint === a.endpoint).serves).to.deep.equal({ methods: ['count', 'echo', 'ordersGet', 'ordersPut', 'sleep', 'spin', 'whoami'], version: '2.1.0', labels: { zone: 'a', tier: 'gold', 'zeromesh/events': DEMO_EVENTS, 'zeromesh/streams': DEMO_STREAMS }, capacity: 1, contracts: [], events: [{ event: 'cache.drop', group: 'cache.drop' }], streams: ['count'] })
      expect(list.find((x) => x.endpoint === b.endpoint).serves).to.deep.equal({ methods: ['count', 'echo', 'sleep', 'spin', 'whoami'], version: '1.0.0', labels: { zone: 'b', 'zeromesh/events': DEMO_EVENTS, 'zeromesh/streams': DEMO_STREAMS }, capacity: 8, contracts: [], events: [{ event: 'cache.drop', group: 'cache.drop' }], streams: ['count'] })
    }, { timeout: 8000 })
    const table = run(['members', '--seeds', a.endpoint])
    await table.exited
    expect(table.stdout.split('\n')[0]).to.match(/^ENDPOINT\s+STATE\s+INCARNATION\s+METHODS\s+VERSION\s+LABELS\s+META$/)
    expect(table.stdout).to.match(/count,echo,ordersGet,ordersPut,sleep,\+2\s+2\.1\.0\s+zone=a,tier=gold\s/)
    expect(table.stdout).to.not.include('zeromesh/') // zeromesh's own labels stay out of the user's column (issue 68, item 7)
    for (const [args, want] of [[['--version', '^1'], b.endpoint], [['--where', 'zone=a'], a.endpoint], [['--version', '^2', '--where', 'tier=gold'], a.endpoint]]) {
      const r = run(['request', '--seeds', b.endpoint, ...args, 'whoami'])
      expect((await r.exited).code, r.stderr).to.equal(0)
      expect(JSON.parse(r.stdout).endpoint).to.equal(want)
    }
    const o = run(['request', '--seeds', b.endpoint, 'ordersGet', '{"id":7}']) // only A serves it; the client starts from B
    expect((await o.exited).code, o.stderr).to.equal(0)
    expect(JSON.parse(o.stdout)).to.deep.equal({ id: 7, status: 'shipped' })
    const bad = run(['request', '--seeds', b.endpoint, '--where', 'zone', 'whoami'])
    expect((await bad.exited).code).to.equal(2)
    expect(bad.stderr).to.match(/--where takes KEY=VALUE pairs/)
    const twice = run(['peer', '--handlers', `${orders},${orders.replace('orders.js', 'work.js')},demo/handlers.js`, '--threads', '1'])
    expect((await twice.exited).code).to.equal(2)
    expect(twice.stderr).to.match(/method "spin" is exported by both .*work\.js and .*handlers\.js: give each method one module/)
  })

  it('SIGTERM drains: requests in flight complete, and the peer exits 0', async () => {
    const p = await startPeer()
    const client = h.client({ seeds: [p.endpoint], idempotent: false })
    await client.request('echo', 1)
    const inflight = Array.from({ length: 10 }, () => client.request('sleep', { ms: 400 }))
    await eventually(() => expect(client.peers()[0].inflight).to.equal(10))
    // ...and the peer holds them all: the load it reports in a reply to another caller
    // (PROTOCOL.md 4.2), here to a method it does not serve, answered without a thread.
    const raw = rawAsker()
    try {
      await eventually(async () => expect((await raw.ask(p.endpoint, encodeRequest([[1, 'notServed', null, 1000]]))).msg.meta.load).to.equal(10))
    } finally {
      raw.close()
    }
    process.kill(p.pid, 'SIGTERM')
    const out = await Promise.all(inflight)
    expect(out).to.deep.equal(Array(10).fill({ slept: 400 }))
    expect(await p.exited).to.deep.equal({ code: 0, signal: null })
    expect(p.stderr).to.match(/SIGTERM: draining/)
  })

  it('SIGKILL of one of two peers: idempotent requests under load all succeed on the other', async () => {
    const a = await startPeer()
    const b = await startPeer()
    const client = h.client({ seeds: [a.endpoint, b.endpoint] })
    await eventually(() => expect(client.peers().filter((x) => x.state === 'up')).to.have.length(2))
    const load = startLoad(16, () => client.request('sleep', { ms: 5 }, { timeout: 2000 }))
    try {
      await eventually(() => expect(load.ok).to.be.at.least(100))
      process.kill(a.pid, 'SIGKILL')
      await eventually(() => expect(client.peers().find((x) => x.endpoint === a.endpoint).state).to.equal('down'))
      const before = load.ok
      await eventually(() => expect(load.ok).to.be.at.least(before + 200))
    } finally {
      await load.stop()
    }
    expect(load.failures).to.deep.equal([])
    expect(client.stats().retries).to.be.at.least(1)
  })

  it('a peer restarted at the same endpoint is used again', async () => {
    const a = await startPeer()
    const client = h.client({ seeds: [a.endpoint] })
    expect((await client.request('whoami')).pid).to.equal(a.pid)
    process.kill(a.pid, 'SIGKILL')
    await a.exited
    await eventually(() => expect(client.peers()[0].state).to.equal('down'))
    const a2 = await startPeer(['--bind', a.endpoint])
    expect(a2.endpoint).to.equal(a.endpoint)
    expect((await client.request('whoami', null, { timeout: 5000 })).pid).to.equal(a2.pid)
  })

  it('a non-idempotent request in flight on a killed peer fails with ERR_ZEROMESH_CONNECTION_LOST, not a hang', async () => {
    const a = await startPeer()
    const client = h.client({ seeds: [a.endpoint] })
    await client.request('echo', 1)
    const pending = client.request('sleep', { ms: 3000 }, { idempotent: false, timeout: 10000 })
    await eventually(() => expect(client.peers()[0].inflight).to.equal(1))
    const t0 = Date.now()
    process.kill(a.pid, 'SIGKILL')
    let err
    try { await pending } catch (e) { err = e }
    expect(err?.code).to.equal('ERR_ZEROMESH_CONNECTION_LOST')
    expect(Date.now() - t0).to.be.below(2000)
  })
})
