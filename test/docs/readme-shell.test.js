// The README's two shell quick starts run as pasted, with bash: in this clone, and in a project
// that installed the packed tarball (npm pack, npm install). Only their fixed ports are
// swapped for free ephemeral ones (tests never bind fixed ports). Each snippet must leave no
// process behind: its ports are free once it ends, and the whole process group is killed
// afterwards in any case.
import { expect } from 'chai'
import { readFileSync, mkdtempSync, rmSync, writeFileSync, readdirSync } from 'node:fs'
import { spawn, execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
const QUICK_START = README.slice(README.indexOf('## Quick start'), README.indexOf('\n## ', README.indexOf('## Quick start') + 5))
const [PLAIN, SECURED] = [...QUICK_START.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1])
const INSTALLED = 'zm=./node_modules/.bin/zeromesh'
const withZm = (snippet) => snippet.split('\n')[0] + '\n' // the line that sets $zm

/** `n` distinct free ports: all held open until each is known, so no two are the same. */
async function freePorts (n) {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => resolve(s)).on('error', reject)
  })))
  const ports = servers.map((s) => s.address().port)
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  return ports
}
const listening = (port) => new Promise((resolve) => {
  const c = net.connect(port, '127.0.0.1', () => { c.destroy(); resolve(true) }).on('error', () => resolve(false))
})

/** Runs `script` with bash in `cwd`; resolves { code, stdout, stderr }, kills its group after. */
async function bash (script, cwd, timeoutMs = 30000) {
  const child = spawn('bash', ['-c', script], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL') } catch {} }, timeoutMs)
  const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? signal)))
  clearTimeout(timer)
  return { code, stdout, stderr, group: child.pid }
}

async function runSnippet (snippet, cwd) {
  const ports = await freePorts(2) // two calls of one could return the same port
  const script = snippet.replaceAll('5555', String(ports[0])).replaceAll('5556', String(ports[1]))
  const run = await bash(`set -e\n${script}\nwait\n`, cwd)
  const stillListening = []
  for (const port of ports) if (await listening(port)) stillListening.push(port)
  try { process.kill(-run.group, 'SIGKILL') } catch {} // anything left of the group, found or not
  return { ...run, ports, stillListening }
}

function expectBothRan ({ code, stdout, stderr, ports, stillListening }, requests) {
  expect(code, stderr).to.equal(0)
  expect(stillListening, 'ports still open after the snippet ended').to.deep.equal([])
  const lines = stdout.trim().split('\n')
  const endpoints = ports.map((p) => `tcp://127.0.0.1:${p}`)
  for (const e of endpoints) expect(lines).to.include(e) // each peer printed its endpoint
  // JSON answers; not a Z85 key from keygen, which can start with "{" too (1 key in 85)
  const answers = lines.filter((l) => { try { return JSON.parse(l)?.endpoint !== undefined } catch { return false } })
  expect(answers, stdout).to.have.length(requests)
  for (const a of answers) expect(endpoints).to.include(JSON.parse(a).endpoint)
  const exits = stderr.split('\n').filter((l) => l.includes('"msg":"stopped"'))
  expect(exits, stderr).to.have.length(2) // both peers drained and stopped on the snippet's kill
}

describe('README shell quick starts (bash, as pasted)', function () {
  this.timeout(90000)
  let dirs = []
  afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })

  it('the README has both snippets, each stopping what it starts', () => {
    expect(PLAIN).to.match(/^zm="node bin\/zeromesh.js"/)
    expect(PLAIN).to.include(INSTALLED) // the installed path is named beside it
    for (const s of [PLAIN, SECURED]) expect(s).to.match(/kill %1 %2/)
  })

  it('in a clone: the plain one (members, a request) and the secured one (keys, a request over CURVE, keys removed)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-clone-'))
    dirs.push(dir)
    // a clone's files: the working tree as committed, with this checkout's node_modules
    execFileSync('git', ['archive', '--format=tar', '-o', path.join(dir, 'src.tar'), 'HEAD'], { cwd: ROOT })
    execFileSync('tar', ['-xf', 'src.tar'], { cwd: dir })
    execFileSync('ln', ['-s', path.join(ROOT, 'node_modules'), 'node_modules'], { cwd: dir })
    const plain = await runSnippet(PLAIN, dir)
    expectBothRan(plain, 1)
    for (const port of plain.ports) expect(plain.stdout).to.match(new RegExp(`tcp://127.0.0.1:${port} +alive `)) // members: both, alive
    const before = readdirSync(dir).sort()
    const secured = await runSnippet(withZm(PLAIN) + SECURED, dir) // "with $zm as above"
    expectBothRan(secured, 1)
    expect(readdirSync(dir).sort()).to.deep.equal(before) // its keys removed
  })

  it('in a project that installed the packed tarball, with the installed path', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-project-'))
    dirs.push(dir)
    const tarball = execFileSync('npm', ['pack', ROOT, '--silent'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').pop()
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'readme-project', private: true }))
    execFileSync('npm', ['install', `./${tarball}`, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore', timeout: 60000 })
    const installed = (s) => s.replace(/^zm=.*$/m, INSTALLED)
    expectBothRan(await runSnippet(installed(PLAIN), dir), 1)
    expectBothRan(await runSnippet(INSTALLED + '\n' + SECURED, dir), 1)
  })
})
