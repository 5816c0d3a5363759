// A user's own process running `new Peer()` (not the command), for bench/work/embedded-memory.js:
// prints its endpoint, then answers each line on stdin with its memory as JSON: RSS, the main
// thread's V8 heap, external and ArrayBuffer bytes. `gc` first runs a full collection of every
// thread (what an idle collection would give back).
//   node bench/lib/embedded-peer.js [--threads N] [--memory-limit BYTES]
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Peer } from '../../index.js'
import { insideOf } from '../../peer/peer.js'

const { values } = parseArgs({ options: { threads: { type: 'string', default: '0' }, 'memory-limit': { type: 'string' } } })
const threads = Number(values.threads)
const demo = fileURLToPath(new URL('../../demo/handlers.js', import.meta.url))
const memoryLimit = values['memory-limit'] === undefined ? undefined : Number(values['memory-limit'])
const peer = new Peer({ bind: 'tcp://127.0.0.1:0', handlers: demo, threads, memoryLimit })
process.stdout.write(`${await peer.start()}\n`)

function memory () {
  const m = process.memoryUsage()
  return { rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }
}
createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'quit') { await peer.stop(); process.exit(0) }
  if (line === 'gc') { insideOf(peer).collectGarbage(); await new Promise((resolve) => setTimeout(resolve, 2000)) } // what an idle collection gives back (threads collect on a message; ArrayBuffers are freed behind)
  process.stdout.write(JSON.stringify(memory()) + '\n')
}).on('close', async () => { // the process that started it is gone (stdin closed): so is this one
  await peer.stop()
  process.exit(0)
})
