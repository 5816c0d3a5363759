// The client process of bench/request-path/wakeups.js: one request at a time against ENDPOINT,
// with a zeromesh Client or the raw zeromq.js Dealer of bin/bench/harness.js (one message per
// request). It warms up, then takes windows one at a time from its parent, over stdin:
//   "go N"        N sequential requests, plain
//   "hooks N"     N sequential requests with this process instrumented (wakeups-hooks.js)
//   "alloc N"     N sequential requests under v8.GCProfiler: collections by kind, and the bytes
//                 the heap took in the window (what each collection found before it, less what
//                 the one before left, plus the growth since the last)
//   "exit"
// and prints a JSON line when each is done ({ ms } of the window, and the counts for "hooks").
// Before the first window it prints {"ready":true}.
//   node bench/lib/wakeups-client.js zeromesh|raw ENDPOINT WARMUP
import { createInterface } from 'node:readline'
import v8 from 'node:v8'
import { start, stop } from './wakeups-hooks.js' // first: it wraps the timer functions before zeromesh loads

const [system, endpoint, warmupArg] = process.argv.slice(2)
const WARMUP = Number(warmupArg)

const { PAYLOAD, rawClient } = await import('../../bin/bench/harness.js')
let one, close
if (system === 'zeromesh') {
  const { Client } = await import('../../index.js')
  const client = new Client({ seeds: [endpoint], timeout: 30000 })
  one = () => client.request('echo', PAYLOAD)
  close = () => client.close()
} else if (system === 'raw') {
  const raw = rawClient(endpoint, 1, PAYLOAD)
  one = raw.one
  close = raw.close
} else {
  throw new Error(`unknown system ${system}: zeromesh or raw`)
}

async function run (n) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) await one()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

await run(WARMUP)
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n')
say({ ready: true })
for await (const line of createInterface({ input: process.stdin })) {
  const [what, count] = line.trim().split(' ')
  if (what === 'go') {
    say({ ms: await run(Number(count)) })
  } else if (what === 'hooks') {
    start()
    const ms = await run(Number(count))
    say({ ms, ...stop() })
  } else if (what === 'alloc') {
    const profiler = new v8.GCProfiler()
    const used0 = v8.getHeapStatistics().used_heap_size
    profiler.start()
    const ms = await run(Number(count))
    const used1 = v8.getHeapStatistics().used_heap_size
    const { statistics } = profiler.stop()
    const gcs = {}
    let bytes = 0
    let left = used0
    for (const g of statistics) {
      gcs[g.gcType] = (gcs[g.gcType] ?? 0) + 1
      bytes += g.beforeGC.heapStatistics.usedHeapSize - left
      left = g.afterGC.heapStatistics.usedHeapSize
    }
    bytes += used1 - left
    say({ ms, gcs, bytes })
  } else if (what === 'exit') {
    break
  }
}
await close()
process.exit(0)
