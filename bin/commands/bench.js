// zeromesh bench: throughput and latency of the request path, with ratios against raw ZeroMQ.
import process from 'node:process'
import { USAGE } from '../usage.js'
import { UsageError, parse, sizeOption } from '../args.js'
import { SECURITY_CLIENT_FLAGS, clientSecurity } from '../security-flags.js'

export async function run (args) {
  const { values } = parse(args, {
    seeds: { type: 'string' },
    concurrency: { type: 'string' },
    duration: { type: 'string' },
    compare: { type: 'boolean' },
    secure: { type: 'boolean' },
    payload: { type: 'string' },
    json: { type: 'boolean' },
    ...SECURITY_CLIENT_FLAGS,
  }, USAGE.bench)
  if (values.help) { process.stdout.write(USAGE.bench + '\n'); return 0 }
  const concurrency = (values.concurrency ?? '1,16,256').split(',').map(Number)
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1 || c > 10000)) throw new UsageError(`--concurrency must list whole numbers from 1 to 10000\n\n${USAGE.bench}`)
  const seconds = values.duration === undefined ? 5 : Number(values.duration)
  if (!(seconds >= 1 && seconds <= 600)) throw new UsageError(`--duration must be 1 to 600 seconds\n\n${USAGE.bench}`)
  const { runBench } = await import('../bench/command.js')
  const security = clientSecurity(values, USAGE.bench)
  if (security !== undefined && values.seeds === undefined) throw new UsageError(`--cluster-pub and --key are for --seeds; without them bench starts its own peers (--secure adds a secured one)\n\n${USAGE.bench}`)
  const payload = sizeOption(values.payload ?? '40', 'payload', USAGE.bench)
  if (payload < 16 || payload > 1000000) throw new UsageError(`--payload must be 16 bytes to 1m, got "${values.payload}"\n\n${USAGE.bench}`)
  return runBench({ seeds: values.seeds?.split(',').map((s) => s.trim()), security, concurrency, seconds, compare: values.compare, secure: values.secure === true, payload, json: values.json })
}
