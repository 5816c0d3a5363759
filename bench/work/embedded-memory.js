// Where memory sits after a slow reader, in a user's process running `new Peer()` (issue 50,
// item 1). A raw client asks for `--mb` echo replies of 900 KiB and never reads them (its
// receive queue holds one message), then hangs up. The peer (bench/lib/embedded-peer.js) runs with
// the handlers on the main thread or on a thread, without and with glibc's allocator told to
// give memory back (the settings `zeromesh peer` sets for itself). Reports RSS at the start,
// at the peak and `--wait` s after the hang-up, with the main thread's V8 heap, external and
// ArrayBuffer bytes then, and the same after a full collection of every thread.
// With --barrage: every kind of bench/cluster/barrage.js in turn instead (allocator settings on, a
// memory limit of 512 MiB), and where the memory sits 1 s after each kind.
//   node bench/work/embedded-memory.js [--mb 410] [--wait 30] [--barrage]
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import * as zmq from 'zeromq'
import { encodeRequest } from '../../protocol/index.js'
import { barrage, kinds } from '../cluster/barrage.js'
import { ALLOCATOR_SETTINGS as ALLOCATOR } from '../../peer/allocator-advice.js'

const { values } = parseArgs({ options: { mb: { type: 'string', default: '410' }, wait: { type: 'string', default: '30' }, barrage: { type: 'boolean', default: false } } })
const MB = 1024 * 1024
const mb = (x) => Math.round(x / MB)
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** bench/lib/embedded-peer.js started: its endpoint, ask(cmd) for its memory, quit(). */
async function embedded (threads, env, args = []) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../lib/embedded-peer.js', import.meta.url)), '--threads', String(threads), ...args], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => (await lines.next()).value
  const ask = async (cmd = 'stats') => { child.stdin.write(cmd + '\n'); return JSON.parse(await next()) }
  const quit = async () => { child.stdin.write('quit\n'); await new Promise((resolve) => child.once('exit', resolve)) }
  return { endpoint: await next(), ask, quit }
}

async function run (threads, env) {
  const { endpoint, ask, quit } = await embedded(threads, env)
  try {
    await delay(1500)
    const base = await ask()
    const s = new zmq.Dealer({ linger: 0, receiveHighWaterMark: 1, sendHighWaterMark: 100000, sendTimeout: 5000 })
    s.connect(endpoint)
    await delay(300) // connected
    const big = Buffer.alloc(900 * 1024, 7) // under the 1 MiB frame limit with its header
    let peak = base.rss
    const n = Number(values.mb)
    let sent = 0
    for (let i = 1; i <= n; i++) {
      try { await s.send(encodeRequest([[i, 'echo', big, 60000]])); sent++ } catch { break }
      if (i % 20 === 0) peak = Math.max(peak, (await ask()).rss)
    }
    if (sent < n) process.stderr.write(`only ${sent} of ${n} requests could be sent\n`)
    for (let t = 0; t < 10; t++) { await delay(200); peak = Math.max(peak, (await ask()).rss) }
    s.close()
    await delay(Number(values.wait) * 1000)
    const later = await ask()
    const collected = await ask('gc')
    return { threads, allocator: env === ALLOCATOR, base, peak, later, collected }
  } finally {
    await quit()
  }
}

/** Every kind of the barrage in turn; a row of where the memory sits 1 s after each. */
async function runBarrage (threads) {
  const { endpoint, ask, quit } = await embedded(threads, ALLOCATOR, ['--memory-limit', String(512 * MB)])
  const row = (name, m) => process.stdout.write(`| ${name} | ${mb(m.rss)} | ${mb(m.heapUsed)} | ${mb(m.arrayBuffers)} | ${mb(m.external - m.arrayBuffers)} | ${mb(m.rss - m.heapTotal - m.external)} |\n`)
  try {
    await delay(1500)
    process.stdout.write(`\nhandlers ${threads === 0 ? 'on the main thread' : 'on a thread'}, MB\n\n| after | RSS | V8 heap used | ArrayBuffers | other external | outside |\n| --- | ---: | ---: | ---: | ---: | ---: |\n`)
    row('start', await ask())
    for (const name of Object.keys(kinds)) {
      await barrage(endpoint, { names: [name] })
      row(name, await ask())
    }
    await delay(Number(values.wait) * 1000)
    row(`${values.wait} s after the last`, await ask())
  } finally {
    await quit()
  }
}

if (values.barrage) {
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; every kind of bench/cluster/barrage.js in turn, allocator settings, memoryLimit 512 MiB; "outside" is RSS less the main V8 heap and external memory\n`)
  for (const threads of [0, 1]) await runBarrage(threads)
  process.exit(0)
}

process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; ${values.mb} echo replies of 900 KiB never read, RSS ${values.wait} s after the hang-up\n\n`)
process.stdout.write('| handlers | allocator settings | RSS before | peak | after | main heap | main external (ArrayBuffers) | RSS not in the main heap or external | after a full collection: RSS | main external (ArrayBuffers) |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n')
for (const threads of [0, 1]) {
  for (const env of [{}, ALLOCATOR]) {
    const r = await run(threads, env)
    const l = r.later
    const c = r.collected
    process.stdout.write(`| ${threads === 0 ? 'main thread' : '1 thread'} | ${r.allocator ? 'set' : 'none'} | ${mb(r.base.rss)} | ${mb(r.peak)} (+${mb(r.peak - r.base.rss)}) | ${mb(l.rss)} (+${mb(l.rss - r.base.rss)}) | ${mb(l.heapTotal)} | ${mb(l.external)} (${mb(l.arrayBuffers)}) | ${mb(l.rss - l.heapTotal - l.external)} | ${mb(c.rss)} (+${mb(c.rss - r.base.rss)}) | ${mb(c.external)} (${mb(c.arrayBuffers)}) |\n`)
  }
}
