// The client's own cost per request under load, without sockets or another process: N
// requests in flight through Client.request(), over an in-memory transport that answers each
// request frame with one reply frame at the next turn of the event loop, as a peer that
// coalesces its replies does. Reports, per request: CPU (ns), bytes allocated on the heap,
// bytes that survived a young-generation collection, and scavenge pause time, from V8's own
// GC trace (the measuring runs in a child started with --trace-gc-nvp). Survivors are what
// makes a scavenge slow, and a scavenge pause is a pause of every request in flight: at
// 256 in flight over real sockets they are most of the p99 (bench/RESULTS.md, "The tail").
// With --against DIR, rounds alternate between this checkout and another.
// Usage: node bench/client-load.js [--inflight 256] [--requests 200000] [--rounds 5] [--against DIR]
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'

const { values } = parseArgs({
  options: {
    inflight: { type: 'string', default: '256' },
    requests: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
    against: { type: 'string' },
    child: { type: 'string' }, // internal: the checkout to measure, in this process
  },
})
const INFLIGHT = Number(values.inflight)
const N = Number(values.requests)

if (values.child !== undefined) {
  await measure(values.child)
} else {
  const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')
  const roots = [here, ...(values.against === undefined ? [] : [values.against.replace(/\/$/, '')])]
  const results = roots.map(() => [])
  for (let r = 0; r < Number(values.rounds); r++) {
    for (let k = 0; k < roots.length; k++) {
      const i = r % 2 === 0 ? k : roots.length - 1 - k
      results[i].push(await run(roots[i]))
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  console.log(`client at ${INFLIGHT} in flight, ${N} requests x ${values.rounds} rounds, per request (medians of rounds):`)
  console.log('  checkout'.padEnd(40) + 'ns'.padStart(8) + 'allocated B'.padStart(13) + 'survived B'.padStart(12) + 'scavenge ns'.padStart(13) + 'longest scavenge ms'.padStart(21))
  for (let i = 0; i < roots.length; i++) {
    const m = (k) => median(results[i].map((x) => x[k]))
    console.log(`  ${roots[i].slice(-38).padEnd(38)}${m('ns').toFixed(0).padStart(8)}${m('allocated').toFixed(0).padStart(13)}${m('survived').toFixed(0).padStart(12)}${m('scavengeNs').toFixed(0).padStart(13)}${m('longest').toFixed(2).padStart(21)}`)
  }
  if (roots.length === 2) {
    const ratio = (k) => median(results[0].map((x, r) => x[k] / results[1][r][k])).toFixed(3)
    console.log(`  this / against (median of per-round ratios): ns ${ratio('ns')}, allocated ${ratio('allocated')}, survived ${ratio('survived')}`)
  }
}

/** One round in a fresh child: its GC trace between the markers, summed per request. */
function run (root) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--trace-gc-nvp', fileURLToPath(import.meta.url), '--child', root, '--inflight', String(INFLIGHT), '--requests', String(N)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    c.stdout.setEncoding('utf8').on('data', (d) => { out += d })
    c.on('error', reject)
    c.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench child exited ${code}`))
      const lines = out.split('\n')
      const from = lines.findIndex((l) => l.startsWith('BEGIN'))
      const to = lines.findIndex((l) => l.startsWith('END '))
      let allocated = 0; let survived = 0; let scavengeMs = 0; let longest = 0
      for (const l of lines.slice(from + 1, to)) {
        const f = Object.fromEntries(l.split(/\s+/).map((kv) => kv.split('=')))
        if (f.allocated !== undefined) allocated += Number(f.allocated)
        if (f.gc === 's') {
          survived += Number(f.new_space_survived ?? 0)
          scavengeMs += Number(f.pause)
          longest = Math.max(longest, Number(f.pause))
        }
      }
      const ns = Number(lines[to].split(' ')[1])
      resolve({ ns, allocated: allocated / N, survived: survived / N, scavengeNs: scavengeMs * 1e6 / N, longest })
    })
  })
}

/** In the child: N requests through a Client of `root` at INFLIGHT in flight. */
async function measure (root) {
  const { Client } = await import(pathToFileURL(`${root}/index.js`).href)
  const codec = await import(pathToFileURL(`${root}/protocol/codec.js`).href)
  const { MessageType } = await import(pathToFileURL(`${root}/protocol/constants.js`).href)
  const { PAYLOAD, anyClientTransport } = await import(pathToFileURL(fileURLToPath(new URL('./harness.js', import.meta.url))).href)
  const EP = 'tcp://127.0.0.1:1'
  const META = { mv: 1, load: 0 }
  const client = new Client({
    seeds: [EP], // never dialled: the transport below is in memory
    timeout: 30000,
    discover: false,
    transport: anyClientTransport((o) => {
      setImmediate(() => o.onUp(EP))
      return {
        connect () {},
        disconnect () {},
        close: async () => {},
        send (endpoint, frames, done) {
          queueMicrotask(() => done(null))
          const msg = codec.decode(frames[0])
          if (msg.type !== MessageType.REQUEST) return
          const reply = codec.encodeReply(META, msg.requests.map((r) => [r.id, 0, r.args]))
          setImmediate(() => o.onMessage(endpoint, [reply]))
        },
      }
    }),
  })
  await new Promise((resolve) => setTimeout(resolve, 20))
  const drive = async (n) => {
    let left = n
    const loop = async () => { while (left-- > 0) await client.request('echo', PAYLOAD) }
    await Promise.all(Array.from({ length: INFLIGHT }, loop))
  }
  await drive(Math.min(N, 50000)) // warm-up
  process.stdout.write('BEGIN\n')
  const t = process.hrtime.bigint()
  await drive(N)
  const ns = Number(process.hrtime.bigint() - t) / N
  process.stdout.write(`END ${ns}\n`)
  await client.close()
}
