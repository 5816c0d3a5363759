// Where the time goes on the request path: drives `Client.request('echo')` against a
// `zeromesh peer --threads 0` child at one concurrency while V8's sampling profiler runs in
// both processes, then prints self time per function and per file for each side.
// Usage: node bench/profile.js [--seconds 5] [--concurrency 256] [--top 25] [--keep DIR]
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Session } from 'node:inspector/promises'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '../index.js'
import { child, drive, PAYLOAD } from './harness.js'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '256' }, top: { type: 'string', default: '25' }, keep: { type: 'string' } } })
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'zeromesh-profile-'))
const top = Number(values.top)

const peer = await child(['--cpu-prof', `--cpu-prof-dir=${dir}`, fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url)), 'peer', '--demo-handlers', '--threads', '0'])
const client = new Client({ seeds: [peer.line], timeout: 30000 })
await client.request('echo', PAYLOAD)
const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.setSamplingInterval', { interval: 100 })
await session.post('Profiler.start')
const result = await drive(Number(values.concurrency), () => client.request('echo', PAYLOAD), { seconds: Number(values.seconds) })
const { profile } = await session.post('Profiler.stop')
session.disconnect()
await client.close()
const exited = new Promise((resolve) => peer.child.once('exit', resolve))
peer.child.kill('SIGTERM') // the peer drains and exits, and V8 writes its profile
await exited
// The newest profile: a --keep folder may hold earlier runs'.
const newest = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
const peerProfile = JSON.parse(readFileSync(newest, 'utf8'))

console.log(`C=${values.concurrency}, ${values.seconds} s: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms (profilers on: slower than bench/echo.js)\n`)
report('client (this process: the driver loops and the Client)', profile)
report('peer (zeromesh peer --threads 0)', peerProfile)
if (values.keep === undefined) rmSync(dir, { recursive: true, force: true })
else console.log(`profiles kept in ${dir} (open in Chrome DevTools)`)
process.exit(0)

/** Prints the top functions and files by self time of a V8 .cpuprofile. */
function report (title, p) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const self = new Map() // node id -> µs
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
  let total = 0
  const fns = new Map()
  const files = new Map()
  for (const [id, us] of self) {
    total += us
    const cf = byId.get(id).callFrame
    const file = shortFile(cf.url)
    // Functions without a script are native: V8's own entries in parentheses, and built-in or
    // addon code (the zeromq addon's send and receive show up under names such as "Proxy").
    const special = cf.url === '' && cf.functionName.startsWith('(')
    const name = cf.url === '' && !special ? `native: ${cf.functionName || 'anonymous'}` : cf.functionName || '(anonymous)'
    const fn = `${name}${file ? ' ' + file + ':' + (cf.lineNumber + 1) : ''}`
    fns.set(fn, (fns.get(fn) ?? 0) + us)
    const group = file || (special ? cf.functionName : 'native (built-ins, the zeromq addon)')
    files.set(group, (files.get(group) ?? 0) + us)
  }
  const busy = total - (fns.get('(idle)') ?? 0)
  const pct = (us) => (100 * us / busy).toFixed(1).padStart(5) + '%'
  console.log(`## ${title}: ${(busy / 1e6).toFixed(2)} s busy of ${(total / 1e6).toFixed(2)} s\n`)
  console.log('self time by file (share of busy time):')
  for (const [f, us] of [...files].filter(([f]) => f !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(us)}  ${f}`)
  console.log('\nself time by function:')
  for (const [f, us] of [...fns].filter(([f]) => !f.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${f}`)
  console.log('')
}

function shortFile (url) {
  if (!url) return ''
  const u = url.replace(/^file:\/\//, '')
  const nm = u.lastIndexOf('node_modules/')
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length)
  const m = u.match(/\/(protocol|peer|client|bench|bin)\/.*$/)
  return m ? m[0].slice(1) : u.replace(/^node:/, 'node:')
}
