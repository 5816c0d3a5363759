// A/B of the request path against another checkout of zeromesh, in the same run: raw
// zeromq.js, the other checkout's client and peer, and this one's, measured in turn, round
// after round; medians and the per-round ratio this / other. For "is the request path
// unchanged?" after a change:
//
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   node bench/request-path/ab.js /tmp/before --rounds 7 --seconds 2 --concurrency 1,256
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import path from 'node:path'
import os from 'node:os'
import { child, drive, rawClient, killChildren, median, zeromeshSystem } from '../../bin/bench/harness.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,256' },
  },
})
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/request-path/ab.js OTHER_CHECKOUT [--rounds 5] [--seconds 2] [--concurrency 1,256]\n')
  process.exit(2)
}
const other = path.resolve(positionals[0])
const here = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))
const seconds = Number(values.seconds)
const rounds = Number(values.rounds)
const levels = values.concurrency.split(',').map(Number)

const systems = {
  raw: rawClient((await child([fileURLToPath(new URL('../../bin/bench/raw-echo-server.js', import.meta.url))])).line),
  other: await zeromeshSystem(other),
  this: await zeromeshSystem(here),
}
try {
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; other = ${other}, this = ${here}; ${rounds} rounds of ${seconds} s\n\n`)
  process.stdout.write('| in flight | raw req/s (p50 ms) | other req/s (p50 ms) | this req/s (p50 ms) | this / other req/s per round: median (range) | p99 ms other, this |\n| ---: | ---: | ---: | ---: | --- | --- |\n')
  for (const c of levels) {
    const got = { raw: [], other: [], this: [] }
    for (let r = 0; r < rounds; r++) {
      // Alternate which zeromesh goes first, so neither always runs on a warmer machine.
      const order = r % 2 === 0 ? ['raw', 'other', 'this'] : ['raw', 'this', 'other']
      for (const name of order) got[name].push(await drive(c, systems[name].one, { seconds }))
    }
    const cell = (name) => `${Math.round(median(got[name].map((x) => x.rps))).toLocaleString('en-US')} (${median(got[name].map((x) => x.p50)).toFixed(3)})`
    const ratios = got.this.map((x, i) => x.rps / got.other[i].rps)
    process.stdout.write(`| ${c} | ${cell('raw')} | ${cell('other')} | ${cell('this')} | ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}) | ${median(got.other.map((x) => x.p99)).toFixed(2)}, ${median(got.this.map((x) => x.p99)).toFixed(2)} |\n`)
  }
} finally {
  for (const s of Object.values(systems)) await s.close()
  killChildren()
}
