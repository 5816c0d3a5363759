// Bulk bytes, same run (issue 26, items 3 and 7): a zeromesh stream of Buffer items against a
// raw zeromq.js pipeline moving the same Buffers one frame per message (Router sends, Dealer
// reads; ZeroMQ's high-water marks are its flow control), and single requests whose reply is
// one Buffer against a raw Dealer/Router round trip of the same bytes. The server side is a
// child process in each case (a zeromesh peer with one handler on its main thread, or the raw
// Router), the reader this process. Rounds alternate zeromesh and raw; medians are quoted.
// --state MB: both servers keep that many MB of small objects alive, as an application's state
// would (a heap under 8 MB is collected differently: results/earlier.md, "The heap band"). --node-flags:
// flags for node in both server processes (e.g. "--max-semi-space-size=1": results/earlier.md, "Bulk
// items").
//
//   node bench/work/streams.js [--rounds 3] [--mb 128] [--only streams|requests] [--state MB] [--node-flags "FLAGS"]
import { fork } from 'node:child_process'
import { parseArgs } from 'node:util'
import zmq from 'zeromq'
import { keepState } from '../../bin/bench/harness.js'

let state = 0 // MB of state each server keeps (--state)
let nodeFlags = [] // node's flags for the server processes (--node-flags)

if (process.argv[2] === '--serve') await serve(process.argv[3], Number(process.argv[4]))
else await main()

async function main () {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, mb: { type: 'string', default: '128' }, only: { type: 'string' }, state: { type: 'string', default: '0' }, 'node-flags': { type: 'string', default: '' } } })
  const rounds = Number(values.rounds)
  const total = Number(values.mb) * 1e6
  state = Number(values.state)
  nodeFlags = values['node-flags'].split(' ').filter((f) => f !== '')
  const rows = []
  for (const size of values.only === 'requests' ? [] : [1000, 64000, 1000000]) {
    const n = Math.max(64, Math.round(total / size))
    const z = []; const r = []
    for (let i = 0; i < rounds; i++) {
      z.push(await measure('zeromesh-stream', size, n))
      r.push(await measure('raw-pipeline', size, n))
    }
    rows.push(['stream', size, median(z), median(r)])
  }
  for (const size of values.only === 'streams' ? [] : [64000, 1000000]) {
    const n = Math.max(1000, Math.round(2 * total / size))
    const z = []; const r = []
    for (let i = 0; i < rounds; i++) {
      z.push(await measure('zeromesh-request', size, n))
      r.push(await measure('raw-request', size, n))
    }
    rows.push(['request, 4 in flight', size, median(z), median(r)])
  }
  console.log('| what | item or reply | zeromesh MB/s | raw MB/s | ratio |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const [what, size, z, r] of rows) console.log(`| ${what} | ${size.toLocaleString('en')} B | ${z.toFixed(0)} | ${r.toFixed(0)} | ${(z / r).toFixed(2)}x |`)
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** Starts the server child for `mode`, moves n x size bytes, returns MB/s. */
async function measure (mode, size, n) {
  const child = fork(new URL(import.meta.url).pathname, ['--serve', mode, String(state)], { execArgv: [...process.execArgv, ...nodeFlags], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const endpoint = await new Promise((resolve) => child.once('message', resolve))
  try {
    if (mode.startsWith('zeromesh')) {
      const { Client } = await import('../../index.js')
      const c = new Client({ seeds: [endpoint], discover: false, timeout: 60000 })
      await c.waitFor('bytes')
      try {
        // Warm up (the peer is a fresh process: its code is cold), then time.
        if (mode === 'zeromesh-stream') {
          for await (const x of c.stream('bytes', { size, n: Math.min(n, 256) })) void x
          const t0 = process.hrtime.bigint()
          let bytes = 0
          for await (const x of c.stream('bytes', { size, n })) bytes += x.length
          return bytes / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9)
        }
        for (let i = 0; i < 2000; i++) await c.request('one', { size }) // as many as the raw warm-up: both JITs warm
        const t0 = process.hrtime.bigint()
        let bytes = 0
        let left = n
        // Not `bytes += await ...`: that reads `bytes` before the await and loses the other workers' counts.
        const worker = async () => { while (left-- > 0) { const b = await c.request('one', { size }); bytes += b.length } }
        await Promise.all([worker(), worker(), worker(), worker()])
        return bytes / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9)
      } finally {
        await c.close()
      }
    }
    const d = new zmq.Dealer({ linger: 0, receiveHighWaterMark: 64 })
    d.connect(endpoint)
    try {
      if (mode === 'raw-pipeline') {
        const warm = Math.min(n, 256)
        await d.send(JSON.stringify({ size, n: warm }))
        for (let i = 0; i < warm; i++) await d.receive()
        const t0 = process.hrtime.bigint()
        await d.send(JSON.stringify({ size, n }))
        let bytes = 0
        for (let i = 0; i < n; i++) bytes += (await d.receive())[0].length
        return bytes / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9)
      }
      const ask = JSON.stringify({ size, n: 1 })
      for (let i = 0; i < 2000; i++) { await d.send(ask); await d.receive() }
      const t0 = process.hrtime.bigint()
      let bytes = 0
      for (let i = 0; i < 4; i++) await d.send(ask)
      for (let i = 0; i < n; i++) {
        bytes += (await d.receive())[0].length
        if (i + 4 < n) await d.send(ask)
      }
      return bytes / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9)
    } finally {
      d.close()
    }
  } finally {
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
  }
}

async function serve (mode, mb) {
  keepState(mb)
  if (mode.startsWith('zeromesh')) {
    const { Peer } = await import('../../index.js')
    const p = new Peer({
      handlers: {
        async * bytes ({ size, n }) { const b = Buffer.alloc(size, 7); for (let i = 0; i < n; i++) yield b },
        one: ({ size }) => Buffer.alloc(size, 7),
      },
    })
    process.send(await p.start())
    return
  }
  const r = new zmq.Router({ linger: 0, sendHighWaterMark: 64, mandatory: true }) // mandatory: a full pipe makes send() wait, not drop
  await r.bind('tcp://127.0.0.1:0')
  process.send(r.lastEndpoint)
  for await (const [id, ask] of r) {
    const { size, n } = JSON.parse(ask.toString())
    const b = Buffer.alloc(size, 7)
    for (let i = 0; i < n; i++) await r.send([id, b])
  }
}
