// zeromesh request: one request (or a stream, one JSON line per item), its result as JSON.
import process from 'node:process'
import { Client } from '../../index.js'
import { USAGE } from '../usage.js'
import { UsageError, parse, wholeOption, labelsOption } from '../args.js'
import { SECURITY_CLIENT_FLAGS, clientSecurity } from '../security-flags.js'

export async function run (args) {
  const { values, positionals } = parse(args, {
    seeds: { type: 'string' },
    timeout: { type: 'string' },
    'no-idempotent': { type: 'boolean' },
    stream: { type: 'boolean' },
    version: { type: 'string' },
    where: { type: 'string' },
    ...SECURITY_CLIENT_FLAGS,
  }, USAGE.request, true)
  if (values.help) { process.stdout.write(USAGE.request + '\n'); return 0 }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${USAGE.request}`)
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError(`give METHOD and at most one JSON-ARGS\n\n${USAGE.request}`)
  const [method, json] = positionals
  let params
  if (json !== undefined) {
    try { params = JSON.parse(json) } catch (err) { throw new UsageError(`JSON-ARGS is not valid JSON: ${err.message}`) }
  }
  // Every flag is checked before the client exists: a usage error must not leave it open.
  const timeout = wholeOption(values.timeout, 'timeout', USAGE.request, ' of milliseconds')
  const options = { idempotent: values['no-idempotent'] ? false : undefined, version: values.version, where: labelsOption(values.where, '--where', USAGE.request) }
  const client = new Client({ seeds: values.seeds, security: clientSecurity(values, USAGE.request) })
  try {
    if (values.stream) {
      // Each item as it comes, one JSON line each; --timeout is the longest wait for an item.
      for await (const item of client.stream(method, params, { ...options, idleTimeout: timeout })) {
        if (!process.stdout.write(JSON.stringify(item ?? null) + '\n')) await new Promise((resolve) => process.stdout.once('drain', resolve))
      }
      return 0
    }
    const result = await client.request(method, params, { ...options, timeout })
    process.stdout.write(JSON.stringify(result ?? null) + '\n')
    return 0
  } finally {
    await client.close()
  }
}
