// What tracing costs on the request path (issue 27): this checkout's client and peer with no
// tracer provider registered ("off": @opentelemetry/api installed, nothing registered), with
// one in both processes ("on": the SDK, a BatchSpanProcessor and an exporter that drops the
// spans, bench/lib/tracing-setup.js, every span recorded), the same sampling `--sample` of the
// traces ("sampled": each call a root, whose decision the SDK's sampler makes with a span of
// its own), the same with each call made inside a caller's span whose decision is made
// already ("in-trace": as under a traced HTTP server's span, `--sample` of them sampled), the
// context manager and propagator alone with calls inside that caller's context, no tracer
// provider ("context": what an application's OpenTelemetry set-up costs before zeromesh does
// anything; in-trace / context is what zeromesh adds), and optionally another checkout
// without tracing code ("other"), measured in turn, round after round; medians and per-round
// ratios.
//
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   node bench/request-path/tracing.js [/tmp/before] --rounds 7 --seconds 2 --concurrency 1,256 --sample 0.01
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import path from 'node:path'
import os from 'node:os'
import { drive, killChildren, median, zeromeshSystem } from '../../bin/bench/harness.js'
import { startTracing, stopTracing, tracingImport, startContext, stopContext, contextImport } from '../lib/tracing-setup.js'
import { trace, context, ROOT_CONTEXT, TraceFlags } from '@opentelemetry/api'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '7' },
    concurrency: { type: 'string', default: '1,256' },
    sample: { type: 'string', default: '0.01' },
  },
})
const here = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))
const other = positionals.length > 0 ? path.resolve(positionals[0]) : null
const seconds = Number(values.seconds)
const rounds = Number(values.rounds)
const levels = values.concurrency.split(',').map(Number)
const ratio = Number(values.sample)

const systems = { off: await zeromeshSystem(here), on: await zeromeshSystem(here, ['--import', tracingImport()]), sampled: await zeromeshSystem(here, ['--import', tracingImport(ratio)]) }
// Calls inside a caller's span (a span context only: the caller's own span is not what is
// measured), 1 in 1/ratio of them sampled, the rest not.
const inTrace = await zeromeshSystem(here, ['--import', tracingImport(ratio)])
const parents = [trace.setSpanContext(ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true }), trace.setSpanContext(ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319d', spanId: 'b7ad6b7169203332', traceFlags: TraceFlags.NONE, isRemote: true })]
let n = 0
const every = Math.max(1, Math.round(1 / ratio))
systems['in-trace'] = { one: () => context.with(parents[n++ % every === 0 ? 0 : 1], inTrace.one), close: inTrace.close }
const contextOnly = await zeromeshSystem(here, ['--import', contextImport()])
systems.context = { one: () => context.with(parents[1], contextOnly.one), close: contextOnly.close }
if (other !== null) systems.other = await zeromeshSystem(other)
const names = Object.keys(systems)

/** One measurement of `name`; "on" and "sampled" register the tracer in this process (the client's) for its time. */
async function measure (name, c) {
  const provider = name === 'on' ? startTracing() : name === 'sampled' || name === 'in-trace' ? startTracing(ratio) : null
  if (name === 'context') startContext()
  try {
    return await drive(c, systems[name].one, { seconds })
  } finally {
    if (provider !== null) await stopTracing(provider)
    if (name === 'context') stopContext()
  }
}

try {
  process.stdout.write(`${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}; ${rounds} rounds of ${seconds} s; sampled = ${ratio} of the traces${other === null ? '' : `; other = ${other}`}\n\n`)
  const ratioNames = [['on', 'off'], ['sampled', 'off'], ['in-trace', 'off'], ['context', 'off'], ['in-trace', 'context'], ...(other === null ? [] : [['off', 'other'], ['on', 'other']])]
  process.stdout.write(`| in flight | ${names.map((n) => `${n} req/s (p50 ms)`).join(' | ')} | ${ratioNames.map(([a, b]) => `${a} / ${b} per round: median (range)`).join(' | ')} |\n`)
  process.stdout.write(`| ---: | ${names.map(() => '---:').join(' | ')} | ${ratioNames.map(() => '---').join(' | ')} |\n`)
  for (const c of levels) {
    const got = Object.fromEntries(names.map((n) => [n, []]))
    for (let r = 0; r < rounds; r++) {
      // Turn the order round each time, so no system always runs on a warmer machine.
      const order = names.map((_, i) => names[(i + r) % names.length])
      for (const name of order) got[name].push(await measure(name, c))
    }
    const cell = (name) => `${Math.round(median(got[name].map((x) => x.rps))).toLocaleString('en-US')} (${median(got[name].map((x) => x.p50)).toFixed(3)})`
    const ratio = ([a, b]) => {
      const rs = got[a].map((x, i) => x.rps / got[b][i].rps)
      return `${median(rs).toFixed(3)} (${Math.min(...rs).toFixed(2)}-${Math.max(...rs).toFixed(2)})`
    }
    process.stdout.write(`| ${c} | ${names.map(cell).join(' | ')} | ${ratioNames.map(ratio).join(' | ')} |\n`)
  }
} finally {
  for (const s of Object.values(systems)) await s.close()
  killChildren()
}
