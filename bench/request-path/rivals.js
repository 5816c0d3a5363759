// zeromesh beside moleculer and cote, in the same run: a small echo (~40 bytes) from a client
// in this process to a server in a child process, at 1 and 256 in flight, round after round in
// turn; medians of req/s and p99, and zeromesh's req/s over each rival's per round. What the
// README's comparison rests on (bench/RESULTS.md).
//   zeromesh   a Client to `zeromesh peer` (the demo's handlers on its main thread)
//   moleculer  a ServiceBroker calling another's action over its TCP transporter (UDP discovery
//              off, the server in the client's urls), its default JSON serializer
//   cote       a Requester to a Responder, found by cote's UDP discovery
// cote binds every address and discovers by broadcast, so the benchmark runs in a network
// namespace it makes (loopback only), as root, and removes at the end; every child is killed.
// Usage (root): node bench/request-path/rivals.js [--rounds 5] [--seconds 3] [--concurrency 1,256]
import { parseArgs } from 'node:util'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import net from 'node:net'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { child, drive, killChildren, median, zeromeshSystem, PAYLOAD } from '../../bin/bench/harness.js'
import { COTE_DISCOVERY } from '../lib/rival-servers.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '1,256' } } })
const NS = process.env.ZEROMESH_RIVALS_NS

if (NS === undefined) {
  // Outside: make the namespace, run this script in it, remove the namespace whatever happens.
  if (process.getuid?.() !== 0) { process.stderr.write('rivals.js makes a network namespace (cote binds every address): run it as root\n'); process.exit(2) }
  const ns = `zeromesh-rivals-${process.pid}`
  const ip = (...args) => spawnSync('ip', args, { stdio: 'inherit' })
  if (ip('netns', 'add', ns).status !== 0) process.exit(1)
  let status = 1
  try {
    ip('-n', ns, 'link', 'set', 'lo', 'up')
    const argv = [process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)]
    status = spawnSync('ip', ['netns', 'exec', ns, ...argv], { stdio: 'inherit', env: { ...process.env, ZEROMESH_RIVALS_NS: ns }, timeout: 30 * 60 * 1000 }).status ?? 1
  } finally {
    ip('netns', 'del', ns)
  }
  process.exit(status)
}

const here = fileURLToPath(new URL('../..', import.meta.url))
const servers = fileURLToPath(new URL('../lib/rival-servers.js', import.meta.url))
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const levels = values.concurrency.split(',').map(Number)

/** A free port on 127.0.0.1 (the moleculer server's: its transporter takes a port, not 0). */
function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

async function moleculerSystem () {
  const { ServiceBroker } = await import('moleculer')
  const { line } = await child([servers, 'moleculer', String(await freePort())])
  const broker = new ServiceBroker({ nodeID: 'client', logger: false, transporter: { type: 'TCP', options: { udpDiscovery: false, urls: [line] } } })
  await broker.start()
  await broker.waitForServices('echo', 10000)
  await broker.call('echo.echo', PAYLOAD)
  return { one: () => broker.call('echo.echo', PAYLOAD), close: () => broker.stop() }
}

async function coteSystem () {
  const { default: cote } = await import('cote')
  await child([servers, 'cote'])
  const q = new cote.Requester({ name: 'bench-client', key: 'zeromesh-bench' }, COTE_DISCOVERY)
  await q.send({ type: 'echo', payload: PAYLOAD }) // waits for the responder to be discovered
  return { one: () => q.send({ type: 'echo', payload: PAYLOAD }), close: () => q.close() }
}

const systems = { zeromesh: await zeromeshSystem(here), moleculer: await moleculerSystem(), cote: await coteSystem() }
const names = Object.keys(systems)
try {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu'
  const versions = (name) => JSON.parse(readFileSync(`${here}/node_modules/${name}/package.json`, 'utf8')).version
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${cpu}), Node ${process.version}, moleculer ${versions('moleculer')}, cote ${versions('cote')}; ${rounds} rounds of ${seconds} s, systems in turn\n\n`)
  process.stdout.write('| in flight | zeromesh req/s (p99 ms) | moleculer req/s (p99 ms) | cote req/s (p99 ms) | zeromesh / moleculer: median (range) | zeromesh / cote: median (range) |\n| ---: | ---: | ---: | ---: | --- | --- |\n')
  for (const c of levels) {
    const runs = Object.fromEntries(names.map((n) => [n, []]))
    for (let r = 0; r < rounds; r++) for (const n of names) runs[n].push(await drive(c, systems[n].one, { seconds }))
    const cell = (n) => `${median(runs[n].map((x) => x.rps)).toLocaleString('en-US')} (${median(runs[n].map((x) => x.p99))})`
    const ratio = (n) => {
      const per = runs.zeromesh.map((x, i) => x.rps / runs[n][i].rps)
      return `${median(per).toFixed(2)}x (${Math.min(...per).toFixed(2)}-${Math.max(...per).toFixed(2)})`
    }
    process.stdout.write(`| ${c} | ${cell('zeromesh')} | ${cell('moleculer')} | ${cell('cote')} | ${ratio('moleculer')} | ${ratio('cote')} |\n`)
  }
} finally {
  for (const s of Object.values(systems)) await Promise.resolve(s.close()).catch(() => {})
  killChildren()
}
process.exit(0)
