// zeromesh for Python, measured (issue 66, item 4), in one run, round after round:
//   echo     a Python peer's echo (a coroutine on its loop) driven by a Node Client, against a
//            raw pyzmq ROUTER echo doing the same MessagePack work (python/bench/raw_echo.py)
//            driven by the raw zeromq.js client, at 1 and 256 in flight;
//   workers  the CPU loop (spin) on a Python peer of 2 process-pool workers against 1, 16 in
//            flight, beside what raw multiprocessing reaches on the machine (Pool(2) / Pool(1));
//   mixed    a Node client over a fleet of one Node peer and one Python peer (echo).
// Needs the Python package installed: PYTHON=path/to/venv/bin/python (npm run test:python makes
// python/.venv). Usage: node bench/work/python.js [--rounds 3] [--seconds 3]
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import { Client } from '../../index.js'
import { child, drive, rawClientNonBlocking, killChildren, median, PAYLOAD } from '../../bin/bench/harness.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '3' } } })
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const root = fileURLToPath(new URL('../..', import.meta.url))
const PY = process.env.PYTHON ?? `${root}python/.venv/bin/python`
const env = { ...process.env, PYTHONPATH: `${root}python/bench` }
const pyPeer = (...flags) => child(['-m', 'zeromesh', 'peer', '--handlers', 'work', '--log-level', 'error', ...flags], { command: PY, env })

async function clientOf (seeds, peers) {
  const c = new Client({ seeds, timeout: 60000 })
  while (c.peers().filter((p) => p.state === 'up' && p.service !== null).length < peers) await new Promise((resolve) => setTimeout(resolve, 20))
  return c
}

try {
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}, ${execFileSync(PY, ['--version'], { encoding: 'utf8' }).trim()}; ${rounds} rounds of ${seconds} s\n\n`)
  const raw = rawClientNonBlocking((await child([`${root}python/bench/raw_echo.py`], { command: PY, env })).line, 1, PAYLOAD, { msgpack: true })
  const peer = await clientOf([(await pyPeer()).line], 1)
  const zm = { one: () => peer.request('echo', PAYLOAD) }
  process.stdout.write('| in flight | Python peer req/s (p99 ms) | raw pyzmq req/s (p99 ms) | peer / raw: median (range) |\n| ---: | ---: | ---: | --- |\n')
  for (const c of [1, 256]) {
    const a = []; const b = []
    for (let r = 0; r < rounds; r++) { a.push(await drive(c, zm.one, { seconds })); b.push(await drive(c, raw.one, { seconds })) }
    const per = a.map((x, i) => x.rps / b[i].rps)
    process.stdout.write(`| ${c} | ${median(a.map((x) => x.rps)).toLocaleString('en-US')} (${median(a.map((x) => x.p99))}) | ${median(b.map((x) => x.rps)).toLocaleString('en-US')} (${median(b.map((x) => x.p99))}) | ${median(per).toFixed(2)}x (${Math.min(...per).toFixed(2)}-${Math.max(...per).toFixed(2)}) |\n`)
  }
  await peer.close()
  await raw.close?.()

  const one = await clientOf([(await pyPeer('--workers', '1')).line], 1)
  const two = await clientOf([(await pyPeer('--workers', '2')).line], 1)
  const spin = (c) => () => c.request('spin', { n: 300000 })
  const w1 = []; const w2 = []
  for (let r = 0; r < rounds; r++) { w1.push(await drive(16, spin(one), { seconds })); w2.push(await drive(16, spin(two), { seconds })) }
  const ratio = w2.map((x, i) => x.rps / w1[i].rps)
  const pool = execFileSync(PY, [`${root}python/bench/pool_ratio.py`, '300000'], { encoding: 'utf8' }).trim().split(' ').map(Number)
  process.stdout.write(`\nspin (n 300000), 16 in flight: 1 worker ${median(w1.map((x) => x.rps)).toFixed(1)} req/s, 2 workers ${median(w2.map((x) => x.rps)).toFixed(1)} req/s: ${median(ratio).toFixed(2)}x (${Math.min(...ratio).toFixed(2)}-${Math.max(...ratio).toFixed(2)}); raw multiprocessing Pool(2) / Pool(1) the same day: ${pool[2].toFixed(2)}x (${pool[0].toFixed(1)} and ${pool[1].toFixed(1)} tasks/s)\n`)
  await one.close(); await two.close()

  const nodePeer = (await child([`${root}bin/zeromesh.js`, 'peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--log-level', 'silent'])).line
  const py2 = (await pyPeer('--seeds', nodePeer)).line
  const mixed = await clientOf([nodePeer], 2)
  const m = await drive(256, () => mixed.request('echo', PAYLOAD), { seconds })
  process.stdout.write(`\nmixed fleet (a Node peer and a Python peer), a Node client at 256 in flight: ${m.rps.toLocaleString('en-US')} req/s, p99 ${m.p99} ms; the Python peer up in the client's table: ${mixed.peers().some((p) => p.endpoint === py2 && p.state === 'up') ? 'yes' : 'no'}\n`)
  await mixed.close()
} finally {
  killChildren()
}
process.exit(0)
