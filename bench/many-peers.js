// A client that knows many peers: memory per known peer, and what picking a peer costs with
// 3, 100 and 1000 up, for each strategy. The heap and pick figures use a stand-in transport
// that takes connects and reports every peer up, so only the client's own work counts; the
// last table connects a real client to N real ZeroMQ endpoints (one ROUTER bound N times in a
// child process) and reads the client process's RSS, which holds libzmq's buffers too.
//
//   node --expose-gc bench/many-peers.js
import os from 'node:os'
import { spawn } from 'node:child_process'
import { Client } from '../index.js'

if (typeof globalThis.gc !== 'function') {
  process.stderr.write('run with node --expose-gc bench/many-peers.js\n')
  process.exit(2)
}

/** A transport that connects to anything at once and never sends. */
function standIn () {
  let h = null
  return {
    factory: (handlers) => {
      h = handlers
      return { connect: () => true, disconnect: () => {}, send: (ep, frames, done) => queueMicrotask(() => done(null)), close: async () => {} }
    },
    up: (ep) => h.onUp(ep),
  }
}

const endpoints = (n) => Array.from({ length: n }, (_, i) => `tcp://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:5555`)
const median3 = (a, b, c) => [a, b, c].sort((x, y) => x - y)[1]
const heap = () => { globalThis.gc(); globalThis.gc(); return process.memoryUsage().heapUsed }

async function client (n, strategy) {
  const t = standIn()
  const eps = endpoints(n)
  const c = new Client({ seeds: [eps[0]], transport: { connector: t.factory }, strategy, discover: false, security: false, maxPeers: 65535 })
  c.learn(eps.map((endpoint) => ({ endpoint, incarnation: 1, state: 0, meta: { version: '0.1.0', zone: 'a' } })))
  for (const ep of eps) t.up(ep)
  return c
}

process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}\n\n`)

// Memory: the heap a client holds per known peer (the client, connected and up).
// Heap of a client knowing n peers, less that of a client knowing 1, over n - 1.
process.stdout.write('| peers known | heap held beyond a 1-peer client (MB) | per peer (KB) |\n| ---: | ---: | ---: |\n')
const held = async (n) => {
  const before = heap()
  const c = await client(n)
  const after = heap()
  await c.close()
  return after - before
}
const one = median3(await held(1), await held(1), await held(1))
for (const n of [100, 1000, 10000]) {
  const bytes = median3(await held(n), await held(n), await held(n)) - one
  process.stdout.write(`| ${n.toLocaleString('en-US')} | ${(bytes / 1e6).toFixed(2)} | ${(bytes / (n - 1) / 1000).toFixed(2)} |\n`)
}

// Pick cost: the strategy's choice among the up peers, as dispatch() makes it per request.
process.stdout.write('\n| strategy | ns per pick, 3 up | 100 up | 1000 up |\n| --- | ---: | ---: | ---: |\n')
for (const strategy of ['p2c', 'round-robin', 'random']) {
  const cells = []
  for (const n of [3, 100, 1000]) {
    const c = await client(n, strategy)
    const call = { id: 1, method: 'echo', tried: [] }
    const picks = 200000
    let sink = 0
    for (let i = 0; i < 20000; i++) sink += c.strategy.select(c.table.up(), call).order // warm up
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < picks; i++) sink += c.strategy.select(c.table.up(), call).order
    const ns = Number(process.hrtime.bigint() - t0) / picks
    if (sink < 0) process.stdout.write('') // keep the loop's result alive
    cells.push(ns.toFixed(0))
    await c.close()
  }
  process.stdout.write(`| ${strategy} | ${cells.join(' | ')} |\n`)
}

// Real connections: RSS of this process (libzmq's native buffers included) per connected peer.
const LISTENER = `
import * as zmq from 'zeromq'
const s = new zmq.Router({ linger: 0 })
const eps = []
for (let i = 0; i < Number(process.argv[1]); i++) { await s.bind('tcp://127.0.0.1:*'); eps.push(s.lastEndpoint) }
process.stdout.write(JSON.stringify(eps) + '\\n')
for await (const m of s) { /* never answers */ }
`
process.stdout.write('\n| peers connected (real sockets) | client RSS added (MB) | per peer (KB) |\n| ---: | ---: | ---: |\n')
for (const n of [100, 1000]) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', LISTENER, String(n)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const eps = await new Promise((resolve) => { let out = ''; child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(JSON.parse(out)) }) })
  globalThis.gc()
  const before = process.memoryUsage().rss
  const c = new Client({ seeds: eps, discover: false, maxPeers: 65535 })
  const end = Date.now() + 20000
  while (c.peers().filter((p) => p.state === 'up').length < n && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
  globalThis.gc()
  const after = process.memoryUsage().rss
  const up = c.peers().filter((p) => p.state === 'up').length
  process.stdout.write(`| ${up.toLocaleString('en-US')} | ${((after - before) / 1e6).toFixed(1)} | ${((after - before) / up / 1000).toFixed(1)} |\n`)
  await c.close()
  child.kill('SIGKILL')
}
