// Memory comes back and stays capped (issue 24, item 5). `zeromesh peer`, run as a command as
// an install runs it (its sh header, the Dockerfile's settings), takes hostile input: a burst
// of 200 requests of 900 KiB with fresh ids, then 8 clients at once that send large requests
// as fast as they can and never read a reply, then hang up. After each, its RSS must be back
// within baseline + 64 MB within 30 s. As root, with a cgroup memory controller, the peer runs
// in a cgroup this test makes, limited to the Kubernetes manifest's memory limit, and must
// never be killed; elsewhere that part says it skipped, and why.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as zmq from 'zeromq'
import { Client } from '../../index.js'
import { eventually, sampleUntil, steady } from '../helpers/eventually.js'
import { encodeRequest } from '../../protocol/index.js'
import { barrage } from '../../bench/cluster/barrage.js'
import { rssOf } from '../helpers/processes.js'
import { ALLOCATOR_SETTINGS as SETTINGS } from '../../peer/allocator-advice.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const BIN = path.join(ROOT, 'bin', 'zeromesh.js')
const MB = 1024 * 1024
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const atRest = (read) => steady(read, { tolerance: 2 * MB }) //  a baseline: the RSS once it holds still
const connected = (socket) => new Promise((resolve) => socket.events.on('connect', resolve))

/** Removes a cgroup once the processes killed in it are gone (the kernel empties it a moment later). */
const removeCgroup = (dir) => eventually(() => fs.rmdirSync(dir), { timeout: 5000, interval: 100 }).catch(() => {})

/** The manifest's container memory limit, in bytes. */
function manifestLimit () {
  const yaml = fs.readFileSync(path.join(ROOT, 'deploy', 'kubernetes', 'deployment.yaml'), 'utf8')
  const m = /limits:[\s\S]*?memory:\s*(\d+)Mi/.exec(yaml)
  return Number(m[1]) * MB
}

let cgroupsMade = 0

/** A cgroup of our own limited to `bytes`, or { skipped: why }. v1 and v2 both. */
function makeCgroup (bytes) {
  if (process.getuid?.() !== 0) return { skipped: 'not root: cannot make a cgroup' }
  const name = `zeromesh-memory-${process.pid}-${++cgroupsMade}`
  const v1 = '/sys/fs/cgroup/memory'
  const v2 = '/sys/fs/cgroup'
  try {
    if (fs.existsSync(path.join(v1, 'memory.limit_in_bytes'))) {
      const dir = path.join(v1, name)
      fs.mkdirSync(dir)
      fs.writeFileSync(path.join(dir, 'memory.limit_in_bytes'), String(bytes))
      try { fs.writeFileSync(path.join(dir, 'memory.memsw.limit_in_bytes'), String(bytes)) } catch { /* no swap accounting */ }
      return { dir, ooms: () => Number(/oom_kill (\d+)/.exec(fs.readFileSync(path.join(dir, 'memory.oom_control'), 'utf8'))?.[1] ?? 0), peak: () => Number(fs.readFileSync(path.join(dir, 'memory.max_usage_in_bytes'), 'utf8')) }
    }
    if (fs.existsSync(path.join(v2, 'cgroup.controllers')) && fs.readFileSync(path.join(v2, 'cgroup.controllers'), 'utf8').includes('memory')) {
      const dir = path.join(v2, name)
      fs.mkdirSync(dir)
      fs.writeFileSync(path.join(dir, 'memory.max'), String(bytes))
      try { fs.writeFileSync(path.join(dir, 'memory.swap.max'), '0') } catch { /* no swap control */ }
      return { dir, ooms: () => Number(/oom_kill (\d+)/.exec(fs.readFileSync(path.join(dir, 'memory.events'), 'utf8'))?.[1] ?? 0), peak: () => { try { return Number(fs.readFileSync(path.join(dir, 'memory.peak'), 'utf8')) } catch { return NaN } } }
    }
    return { skipped: 'no cgroup memory controller on this machine' }
  } catch (err) {
    return { skipped: `cannot make a cgroup: ${err.message}` }
  }
}

/** Spawns `argv` in `cgroup` (when it was made: sh writes its own pid, then becomes the process). */
function spawnIn (cgroup, argv, options) {
  return cgroup.dir
    ? spawn('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup.dir, ...argv], options)
    : spawn(argv[0], argv.slice(1), options)
}

describe('memory after hostile input (zeromesh peer as a command)', function () {
  this.timeout(240000)
  let peer = null
  let cgroup = null
  const sockets = []
  let client = null

  after(async () => {
    for (const s of sockets) s.close()
    await client?.close()
    if (peer !== null && peer.exitCode === null && peer.signalCode === null) { peer.kill('SIGKILL'); await new Promise((resolve) => peer.once('exit', resolve)) }
    if (cgroup?.dir) await removeCgroup(cgroup.dir)
  })

  const rss = () => rssOf(peer.pid)

  /** Waits up to 30 s for the RSS to be within `base` + 64 MB; returns [ms it took, rss]. */
  async function comesBack (base) {
    const { ms, value } = await sampleUntil(rss, (now) => now <= base + 64 * MB, { timeout: 30000, interval: 500 })
    return [ms, value]
  }

  it('starts in a cgroup limited to the manifest\'s memory limit (or says why not)', async () => {
    const limit = manifestLimit()
    cgroup = makeCgroup(limit)
    if (cgroup.skipped) console.log(`      cgroup part skipped: ${cgroup.skipped}`)
    else console.log(`      in ${cgroup.dir}, limit ${limit / MB} MB`)
    const args = [BIN, 'peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--log-level', 'warn']
    peer = spawnIn(cgroup, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    peer.stderrText = ''
    peer.stderr.on('data', (d) => { peer.stderrText = (peer.stderrText + d).slice(-4000) })
    peer.endpoint = await new Promise((resolve, reject) => {
      peer.stdout.once('data', (d) => resolve(d.toString().trim()))
      peer.once('exit', (code, signal) => reject(new Error(`peer exited ${code ?? signal}: ${peer.stderrText}`)))
    })
    const environ = fs.readFileSync(`/proc/${peer.pid}/environ`, 'utf8')
    expect(environ).to.include('MALLOC_MMAP_THRESHOLD_=') // the header's settings reached it
  })

  it('a burst of 200 requests of 900 KiB with fresh ids: back within baseline + 64 MB in 30 s', async () => {
    client = new Client({ seeds: [peer.endpoint], timeout: 30000 })
    await client.request('echo', 'warm')
    const base = await atRest(rss)
    const big = Buffer.alloc(900 * 1024, 7)
    const answers = await Promise.all(Array.from({ length: 200 }, () => client.request('echo', big).then((b) => b.length, (err) => err.code)))
    const peak = rss()
    const [ms, after] = await comesBack(base)
    console.log(`      baseline ${Math.round(base / MB)} MB, after the burst ${Math.round(peak / MB)} MB, ${Math.round(after / MB)} MB ${(ms / 1000).toFixed(1)} s later; ${answers.filter((a) => a === big.length).length} of 200 answered in full`)
    expect(after).to.be.at.most(base + 64 * MB)
    expect(peer.exitCode).to.equal(null)
  })

  it('8 clients that never read, sending 60 kB requests for 6 s, then hanging up: back within baseline + 64 MB in 30 s', async () => {
    const base = rss()
    const payload = 'x'.repeat(60000)
    let peak = 0
    let sent = 0
    for (let i = 0; i < 8; i++) {
      const s = new zmq.Dealer({ linger: 0, receiveHighWaterMark: 1, sendHighWaterMark: 100000, sendTimeout: 0 })
      s.connect(peer.endpoint)
      sockets.push(s)
    }
    const t0 = Date.now()
    while (Date.now() - t0 < 6000 && peer.exitCode === null) {
      for (const s of sockets) { try { s.send(encodeRequest([[++sent, 'echo', payload, 10000]])).catch(() => {}) } catch { /* full */ } }
      if (sent % 400 < 8) { await delay(5); peak = Math.max(peak, rss()) }
    }
    for (const s of sockets.splice(0)) s.close()
    const [ms, after] = peer.exitCode === null ? await comesBack(base) : [0, NaN]
    console.log(`      baseline ${Math.round(base / MB)} MB, at most ${Math.round(peak / MB)} MB during the attack (${sent} requests offered), ${Math.round(after / MB)} MB ${(ms / 1000).toFixed(1)} s after they hung up`)
    expect(peer.exitCode, `peer died: ${peer.signalCode} ${peer.stderrText}`).to.equal(null)
    expect(after).to.be.at.most(base + 64 * MB)
    // and it still serves, once it has run what the flooders sent before they hung up: till
    // then a request is refused busy at once, and a client whose only peer is busy fails
    // (maxAttempts). Seen once: ERR_ZEROMESH_BUSY 0.5 s after the hang-up, 130 in flight.
    const t1 = Date.now()
    let refused = 0
    const answer = await eventually(() => client.request('echo', 'still here', { timeout: 5000 }).catch((err) => { if (err.code === 'ERR_ZEROMESH_BUSY') refused++; throw err }), { timeout: 15000, interval: 100 })
    console.log(`      serves again ${Date.now() - t1} ms after its memory came back (${refused} requests refused busy before)`)
    expect(answer).to.equal('still here')
  })

  it('was never killed for memory (in CI, where it runs as root, in the cgroup)', () => {
    expect(peer.exitCode, `peer died: ${peer.signalCode} ${peer.stderrText}`).to.equal(null)
    // CI runs as root with a memory controller: there the cgroup part must have run.
    if (process.env.CI) expect(cgroup.skipped, 'the cgroup part must run in CI').to.equal(undefined)
    if (cgroup.skipped) { console.log(`      the cgroup part did not run: ${cgroup.skipped}`); return }
    console.log(`      cgroup peak ${Math.round(cgroup.peak() / MB)} MB of ${manifestLimit() / MB} MB`)
    expect(cgroup.ooms()).to.equal(0)
  })
})

// Issue 50, item 2: a Peer in a process of the user's own (not the command) has no sh header
// to set the allocator and no command line to run the idle collection. The Peer runs the
// collection itself; the settings only the environment can give, so without them it says so
// once, as a process warning, when a collection after a burst leaves the memory held (issue 56,
// item 3: not at every start). With them, after a client that asked for 410 replies of 900 KiB
// and never read them, the process is back within baseline + 64 MB in 30 s.
describe('memory after a slow reader, for a Peer embedded in a process of its own', function () {
  this.timeout(180000)
  const EMBEDDED = path.join(ROOT, 'bench', 'lib', 'embedded-peer.js')
  const children = []
  after(() => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL') })

  /** Starts bench/lib/embedded-peer.js with `env`: { child, endpoint, rss(), stderr() }. */
  async function embedded (threads, env) {
    const child = spawn(process.execPath, [EMBEDDED, '--threads', String(threads)], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MALLOC_'))), ...env } })
    children.push(child)
    let err = ''
    child.stderr.on('data', (d) => { err += d })
    const endpoint = await new Promise((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(d.toString().trim()))
      child.once('exit', (code) => reject(new Error(`embedded peer exited ${code}: ${err}`)))
    })
    const rss = () => rssOf(child.pid)
    return { child, endpoint, rss, stderr: () => err }
  }

  for (const threads of [0, 1]) {
    it(`handlers ${threads === 0 ? 'on the main thread' : 'on a thread'}: with the allocator settings, back within baseline + 64 MB 30 s after a slow reader hung up, by itself`, async () => {
      const p = await embedded(threads, SETTINGS)
      const base = await atRest(p.rss)
      const s = new zmq.Dealer({ linger: 0, receiveHighWaterMark: 1, sendHighWaterMark: 100000, sendTimeout: 5000 })
      const up = connected(s)
      s.connect(p.endpoint)
      await up
      const big = Buffer.alloc(900 * 1024, 7)
      let peak = base
      for (let i = 1; i <= 410; i++) {
        await s.send(encodeRequest([[i, 'echo', big, 60000]]))
        if (i % 20 === 0) peak = Math.max(peak, p.rss())
      }
      peak = Math.max(peak, await atRest(p.rss)) // the peer took in what it would
      s.close()
      const { value: now, ms } = await sampleUntil(p.rss, (rss) => rss <= base + 64 * MB, { timeout: 30000, interval: 500 })
      console.log(`      baseline ${Math.round(base / MB)} MB, peak ${Math.round(peak / MB)} MB, ${Math.round(now / MB)} MB ${(ms / 1000).toFixed(1)} s after the hang-up`)
      expect(peak - base, 'the attack did grow it').to.be.above(64 * MB)
      expect(now).to.be.at.most(base + 64 * MB)
      expect(p.stderr()).to.not.include('ZEROMESH_ALLOCATOR') // the settings are there: nothing to say
      p.child.stdin.write('quit\n')
    })
  }

  // Without the settings: after a slow reader of 410 replies of 900 KiB, a thread's arena keeps
  // them (330-345 MB held from a 79 MB baseline): said once. After a burst too small to hold
  // 64 MiB (10 replies), nothing is said. (On the main thread glibc may give the large buffers
  // back or keep them, as its moving mmap threshold has it: 73 MB once, 228 MB another time.)
  for (const [requests, held] of [[10, false], [410, true]]) {
    it(`without the settings, a Peer says nothing at start, and ${held ? 'says so once, naming them, when a collection after a burst leaves its memory held' : 'nothing after a burst that cannot leave 64 MiB held'}`, async () => {
      const p = await embedded(1, {})
      await atRest(p.rss)
      expect(p.stderr()).to.not.include('ZEROMESH_ALLOCATOR') // not at every start (a user's unit tests)
      const s = new zmq.Dealer({ linger: 0, receiveHighWaterMark: 1, sendHighWaterMark: 100000, sendTimeout: 5000 })
      const up = connected(s)
      s.connect(p.endpoint)
      await up
      const big = Buffer.alloc(900 * 1024, 7)
      for (let i = 1; i <= requests; i++) await s.send(encodeRequest([[i, 'echo', big, 60000]]))
      await atRest(p.rss) // the peer took in what it would
      s.close()
      if (held) await eventually(() => expect(p.stderr()).to.include('ZEROMESH_ALLOCATOR'), { timeout: 30000 })
      else await delay(8000) // the subject, not a condition: idle long enough for a collection, were there 32 MiB to collect
      p.child.stdin.write('quit\n')
      await new Promise((resolve) => p.child.once('exit', resolve))
      const warnings = p.stderr().split('\n').filter((l) => l.includes('[ZEROMESH_ALLOCATOR]'))
      if (!held) return expect(warnings).to.deep.equal([])
      expect(warnings).to.have.length(1)
      expect(warnings[0]).to.include('MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768 MALLOC_TRIM_THRESHOLD_=131072')
      expect(warnings[0]).to.match(/kept \d+ MB this process freed after a burst/)
    })
  }
})

// Issue 50, item 3: every kind of hostile input the tests know (bench/cluster/barrage.js), one after
// another, against `zeromesh peer` and against a Peer embedded in a process of its own (with the
// allocator settings its warning names), each in a cgroup limited to the manifest's memory
// limit where the machine allows it (there the peer takes its memory limit from the cgroup;
// elsewhere it is given the same limit). During the barrage the process stays below the
// limit and is never killed; 30 s after the last kind its RSS is within baseline + 64 MB; and
// it serves. The command and an embedded Peer also take it with no limit at all (issue 56,
// item 2: a machine or pm2 without a cgroup): nothing bounds their peak then, but their memory
// comes back the same.
describe('the hostile barrage, every kind in a row', function () {
  this.timeout(300000)
  const targets = [
    ['zeromesh peer (handlers on threads)', (limit) => [BIN, 'peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--log-level', 'warn', ...(limit ? ['--memory-limit', String(limit)] : [])], {}],
    ['a Peer embedded in a process of its own, handlers on the main thread', (limit) => [process.execPath, path.join(ROOT, 'bench', 'lib', 'embedded-peer.js'), '--threads', '0', ...(limit ? ['--memory-limit', String(limit)] : [])], SETTINGS],
    ['a Peer embedded in a process of its own, handlers on a thread', (limit) => [process.execPath, path.join(ROOT, 'bench', 'lib', 'embedded-peer.js'), '--threads', '1', ...(limit ? ['--memory-limit', String(limit)] : [])], SETTINGS],
    // No cgroup and no memory limit (issue 56, item 2), as on a machine or under pm2 without one:
    // nothing bounds the peak (a message of frames without end takes a gigabyte), but memory comes back.
    ['zeromesh peer (handlers on threads), no memory limit', () => [BIN, 'peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--log-level', 'warn', '--memory-limit', '0'], {}, 'none'],
    ['a Peer embedded in a process of its own, handlers on the main thread, no memory limit', () => [process.execPath, path.join(ROOT, 'bench', 'lib', 'embedded-peer.js'), '--threads', '0', '--memory-limit', '0'], SETTINGS, 'none'],
  ]
  const started = []
  const cgroups = []
  after(async () => {
    await Promise.all(started.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => { c.kill('SIGKILL'); return new Promise((resolve) => c.once('exit', resolve)) }))
    for (const g of cgroups) await removeCgroup(g.dir)
  })

  for (const [name, argv, env, bound = 'limit'] of targets) {
    it(`${name}: ${bound === 'limit' ? 'below the limit throughout, ' : ''}within baseline + 64 MB 30 s after the last kind, and serving`, async () => {
      const limit = manifestLimit()
      const cgroup = bound === 'limit' ? makeCgroup(limit) : { skipped: 'none asked for' }
      if (cgroup.dir) cgroups.push(cgroup)
      else if (bound === 'limit') console.log(`      no cgroup (${cgroup.skipped}): the peer is given --memory-limit ${limit}`)
      const child = spawnIn(cgroup, argv(cgroup.dir ? null : limit), { stdio: ['pipe', 'pipe', 'pipe'], env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MALLOC_'))), ...env } })
      started.push(child)
      let stderr = ''
      child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000) })
      const endpoint = await new Promise((resolve, reject) => {
        child.stdout.once('data', (d) => resolve(d.toString().trim()))
        child.once('exit', (code, signal) => reject(new Error(`exited ${code ?? signal}: ${stderr}`)))
      })
      const base = await atRest(() => rssOf(child.pid))
      let peak = base
      const sampler = setInterval(() => { try { peak = Math.max(peak, rssOf(child.pid)) } catch {} }, 10)
      const lines = []
      try {
        await barrage(endpoint, { after: (kind, l) => lines.push(`${kind} ${(l.ms / 1000).toFixed(1)} s, ${Math.round(peak / MB)} MB at most so far`) })
      } finally {
        clearInterval(sampler)
      }
      expect(child.exitCode, `died: ${child.signalCode} ${stderr}`).to.equal(null)
      const { value: now, ms } = await sampleUntil(() => rssOf(child.pid), (rss) => rss <= base + 64 * MB, { timeout: 30000, interval: 500 })
      const sheds = (stderr.match(/closing every connection/g) ?? []).length
      const charged = cgroup.dir ? cgroup.peak() : NaN
      console.log(`      baseline ${Math.round(base / MB)} MB, peak RSS ${Math.round(peak / MB)} MB${cgroup.dir ? ` (the cgroup's peak charge ${Math.round(charged / MB)} MB)` : ''}${bound === 'limit' ? ` of a ${limit / MB} MB limit` : ', no limit'}, ${Math.round(now / MB)} MB ${(ms / 1000).toFixed(1)} s after the last kind; connections closed ${sheds} time(s) for memory`)
      for (const l of lines) console.log(`        ${l}`)
      // Below the limit as the kernel counts it: in a cgroup, what is charged to it (RSS also
      // counts pages of the node binary and libraries charged elsewhere, and was seen at 553 MB
      // of 512 with the charge below the limit); without one, RSS.
      if (cgroup.dir) {
        expect(charged).to.be.below(limit)
        expect(cgroup.ooms()).to.equal(0)
      } else if (bound === 'limit') {
        expect(peak).to.be.below(limit)
      }
      expect(now).to.be.at.most(base + 64 * MB)
      const client = new Client({ seeds: [endpoint], discover: false })
      try {
        expect(await client.request('echo', 'still here', { timeout: 10000 })).to.equal('still here')
      } finally {
        await client.close()
      }
      if (child.stdin.writable) child.stdin.end('quit\n')
      child.kill('SIGKILL')
    })
  }
})
