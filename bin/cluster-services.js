// What `zeromesh members` and `zeromesh describe` both ask of a cluster.
import { Client } from '../index.js'
import { UsageError, parse, wholeOption } from './args.js'
import { SECURITY_CLIENT_FLAGS, clientSecurity } from './security-flags.js'
import { InvalidArgumentError } from '../protocol/errors.js'

/**
 * A client of --seeds (and the security flags), and the members the first seed that answers
 * lists, each live one with what it serves (`serves`: asked of the member itself, null when
 * it did not say): for `members` and `describe` (`flags`: a command's own, beside these).
 */
export async function clusterServices (args, usage, flags = {}) {
  const { values } = parse(args, {
    seeds: { type: 'string' },
    json: { type: 'boolean' },
    timeout: { type: 'string' },
    ...flags,
    ...SECURITY_CLIENT_FLAGS,
  }, usage)
  if (values.help) return { values }
  if (values.seeds === undefined) throw new UsageError(`--seeds is required\n\n${usage}`)
  const seeds = values.seeds.split(',').map((x) => x.trim()).filter(Boolean)
  const client = new Client({ seeds, discover: false, timeout: wholeOption(values.timeout, 'timeout', usage, ' of milliseconds'), security: clientSecurity(values, usage) })
  try {
    // The first seed that answers; the next one when it does not.
    let members
    const seen = client.peers().map((p) => p.endpoint) // its seeds, in order, as the client wrote them (none yet for a DNS name: any peer up)
    const tries = seen.length === 0 ? [undefined] : seen
    for (const [i, from] of tries.entries()) {
      try {
        members = await client.members(from)
        break
      } catch (err) {
        if (i === tries.length - 1 || err.code === InvalidArgumentError.code) throw err
      }
    }
    // What each live member serves, asked of the member itself (the list carries only digests).
    await Promise.all(members.map(async (m) => {
      if (m.state !== 'alive' && m.state !== 'suspect') { m.serves = null; return }
      m.serves = await client.describe(m.endpoint).catch(() => null)
    }))
    return { values, members }
  } finally {
    await client.close()
  }
}
