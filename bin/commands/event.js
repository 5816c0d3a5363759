// zeromesh event: zeromesh publish and zeromesh broadcast: one event, its outcome as JSON.
import process from 'node:process'
import { Client } from '../../index.js'
import { USAGE } from '../usage.js'
import { UsageError, parse, wholeOption, labelsOption } from '../args.js'
import { SECURITY_CLIENT_FLAGS, clientSecurity } from '../security-flags.js'

/** zeromesh publish and zeromesh broadcast: one event, its outcome as JSON. */
export async function run (command, args) {
  const usage = USAGE[command]
  const { values, positionals } = parse(args, {
    seeds: { type: 'string' },
    timeout: { type: 'string' },
    where: { type: 'string' },
    ...(command === 'publish' ? { groups: { type: 'string' }, 'no-ack': { type: 'boolean' } } : {}),
    ...SECURITY_CLIENT_FLAGS,
  }, usage, true)
  if (values.help) { process.stdout.write(usage + '\n'); return 0 }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${usage}`)
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError(`give EVENT and at most one JSON-PAYLOAD\n\n${usage}`)
  const [event, json] = positionals
  let payload
  if (json !== undefined) {
    try { payload = JSON.parse(json) } catch (err) { throw new UsageError(`JSON-PAYLOAD is not valid JSON: ${err.message}`) }
  }
  // Every flag is checked before the client exists: a usage error must not leave it open.
  const options = { timeout: wholeOption(values.timeout, 'timeout', usage, ' of milliseconds'), where: labelsOption(values.where, '--where', usage) }
  if (values.groups !== undefined) options.groups = values.groups.split(',').map((g) => g.trim()).filter(Boolean)
  if (values['no-ack']) options.ack = false
  const client = new Client({ seeds: values.seeds, security: clientSecurity(values, usage) })
  try {
    if (command === 'publish') {
      try {
        process.stdout.write(JSON.stringify(await client.publish(event, payload, options)) + '\n')
      } catch (err) {
        if (err.failed !== undefined) process.stderr.write(JSON.stringify({ delivered: err.delivered, failed: err.failed.map((f) => ({ group: f.group, endpoint: f.endpoint, code: f.error.code, remoteCode: f.error.remoteCode ?? null, message: f.error.message })) }) + '\n')
        throw err
      }
      return 0
    }
    const out = await client.broadcast(event, payload, options)
    process.stdout.write(JSON.stringify({ ...out, failed: out.failed.map((f) => ({ endpoint: f.endpoint, code: f.error.code, remoteCode: f.error.remoteCode ?? null, message: f.error.message })) }) + '\n')
    return out.failed.length + out.unreached.length === 0 ? 0 : 1
  } finally {
    await client.close()
  }
}
