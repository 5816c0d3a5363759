// zeromesh describe: what each live peer serves (methods, contracts with their schemas, events),
// each service once; with --openapi or --asyncapi, the mesh as an OpenAPI 3.1 or AsyncAPI 3
// document (zeromesh/http), from what every live member said it serves.
import process from 'node:process'
import { USAGE } from '../usage.js'
import { UsageError } from '../args.js'
import { clusterServices } from '../cluster-services.js'
import { openapiOf, asyncapiOf } from '../../http/index.js'

export async function run (args) {
  const { values, members } = await clusterServices(args, USAGE.describe, { openapi: { type: 'boolean' }, asyncapi: { type: 'boolean' } })
  if (values.help) { process.stdout.write(USAGE.describe + '\n'); return 0 }
  if (values.openapi || values.asyncapi) {
    if (values.openapi && values.asyncapi) throw new UsageError(`--openapi and --asyncapi print one document each: give one\n\n${USAGE.describe}`)
    const described = members.filter((m) => m.serves !== null && m.serves !== undefined && m.serves !== 'any').map((m) => m.serves)
    const older = members.filter((m) => m.serves === 'any').length
    const onWarning = (message) => process.stderr.write(`warning: ${message}\n`)
    if (older > 0) onWarning(`${older} peer(s) older than service descriptors may serve any method: what they serve is not described`)
    const doc = values.openapi ? openapiOf(described, { onWarning }) : asyncapiOf(described, { onWarning })
    process.stdout.write(JSON.stringify(doc, null, 2) + '\n')
    return 0
  }
  // Each service once: peers whose answers are the same are grouped.
  const services = new Map()
  for (const m of members) {
    if (m.serves === null || m.serves === undefined) continue
    const key = m.serves === 'any' ? 'any' : JSON.stringify(m.serves)
    const s = services.get(key)
    if (s === undefined) services.set(key, { endpoints: [m.endpoint], ...(m.serves === 'any' ? { any: true } : m.serves) })
    else s.endpoints.push(m.endpoint)
  }
  const list = [...services.values()]
  if (values.json) { process.stdout.write(JSON.stringify(list) + '\n'); return 0 }
  const out = []
  for (const s of list) {
    out.push(`${s.endpoints.join(', ')}`)
    if (s.any) { out.push('  serves any method (a peer older than service descriptors)', ''); continue }
    const facts = [s.version === null ? null : `version ${s.version}`, ...Object.entries(s.labels).map(([k, v]) => `${k}=${v}`), s.capacity === null ? null : `capacity ${s.capacity}`].filter((x) => x !== null)
    if (facts.length > 0) out.push(`  ${facts.join(', ')}`)
    const inContracts = new Set()
    for (const c of s.contracts) {
      out.push(`  contract ${c.name}${c.version === null ? '' : ` ${c.version}`}`)
      for (const m of c.methods) {
        inContracts.add(m.name)
        out.push(`    ${m.name}${m.stream ? ' (stream)' : ''}`)
        out.push(`      input:  ${m.input === null ? '(no JSON Schema)' : JSON.stringify(m.input)}`)
        out.push(`      output: ${m.output === null ? '(no JSON Schema)' : JSON.stringify(m.output)}`)
      }
      for (const e of c.events ?? []) out.push(`    event ${e.name}`, `      payload: ${e.payload === null ? '(no JSON Schema)' : JSON.stringify(e.payload)}`)
    }
    const plain = s.methods.filter((m) => !inContracts.has(m))
    if (plain.length > 0) out.push(`  methods without a contract: ${plain.join(', ')}`)
    for (const e of s.events ?? []) out.push(`  subscribes to ${e.event}${e.group === e.event ? '' : ` in group ${e.group}`}`)
    out.push('')
  }
  if (list.length === 0) out.push('no live peer said what it serves')
  process.stdout.write(out.join('\n') + '\n')
  return 0
}
