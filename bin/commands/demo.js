// zeromesh demo: the failover demo (npm start).
import process from 'node:process'
import { USAGE } from '../usage.js'
import { UsageError, parse, wholeOption } from '../args.js'

export async function run (args) {
  const { values } = parse(args, {
    duration: { type: 'string' },
    peers: { type: 'string' },
    'no-chaos': { type: 'boolean' },
    secure: { type: 'boolean' },
  }, USAGE.demo)
  if (values.help) { process.stdout.write(USAGE.demo + '\n'); return 0 }
  const duration = values.duration === undefined ? 40 : Number(values.duration)
  if (!(duration >= 5 && duration <= 3600)) throw new UsageError(`--duration must be 5 to 3600 seconds\n\n${USAGE.demo}`)
  const peers = wholeOption(values.peers, 'peers', USAGE.demo) ?? 3
  if (peers < 1 || peers > 16) throw new UsageError(`--peers must be 1 to 16\n\n${USAGE.demo}`)
  const { runDemo } = await import('../../demo/demo.js')
  return runDemo({ duration, peers, chaos: !values['no-chaos'], secure: values.secure === true })
}
