// Fairness across clients on one peer: a light client (1 request in flight, its own process)
// measured alone, then while a heavy client (this process, 256 in flight, coalesced frames)
// loads the same peer. Usage: node bench/fairness.js [--seconds 3] [--heavy 256]
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import { Client } from '../index.js'
import { child, drive, killChildren, PAYLOAD } from './harness.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { seconds: { type: 'string', default: '3' }, heavy: { type: 'string', default: '256' } } })
const SECONDS = Number(values.seconds)

if (positionals[0] === 'light') {
  // The light client: waits for "go" on stdin, drives 1 in flight, prints its result as JSON.
  const client = new Client({ seeds: [positionals[1]], timeout: 30000 })
  await client.request('echo', PAYLOAD)
  process.stdout.write('ready\n')
  for await (const line of process.stdin) {
    if (String(line).trim() === 'stop') break
    const r = await drive(1, () => client.request('echo', PAYLOAD), { seconds: SECONDS, warmupMs: 200 })
    process.stdout.write(JSON.stringify(r) + '\n')
  }
  await client.close()
  process.exit(0)
}

const peerEp = (await child([fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url)), 'peer', '--demo-handlers', '--threads', '0'])).line
const light = spawn(process.execPath, [fileURLToPath(import.meta.url), 'light', peerEp, '--seconds', String(SECONDS)], { stdio: ['pipe', 'pipe', 'inherit'] })
const lines = (async function * () { let buf = ''; for await (const d of light.stdout) { buf += d; let i; while ((i = buf.indexOf('\n')) >= 0) { yield buf.slice(0, i); buf = buf.slice(i + 1) } } })()
const next = async () => (await lines.next()).value
try {
  await next() // ready
  light.stdin.write('go\n')
  const alone = JSON.parse(await next())
  const heavy = new Client({ seeds: [peerEp], timeout: 30000 })
  await heavy.request('echo', PAYLOAD)
  light.stdin.write('go\n')
  const [h, loaded] = await Promise.all([drive(Number(values.heavy), () => heavy.request('echo', PAYLOAD), { seconds: SECONDS + 0.5, warmupMs: 0 }), next().then(JSON.parse)])
  light.stdin.write('stop\n')
  await heavy.close()
  console.log(`light client alone:          ${alone.rps} req/s, p50 ${alone.p50} ms, p99 ${alone.p99} ms`)
  console.log(`heavy client (${values.heavy} in flight): ${h.rps} req/s, p50 ${h.p50} ms, p99 ${h.p99} ms`)
  console.log(`light client beside it:      ${loaded.rps} req/s, p50 ${loaded.p50} ms, p99 ${loaded.p99} ms`)
} finally {
  light.kill('SIGKILL')
  killChildren()
}
process.exit(0)
