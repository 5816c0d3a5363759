// zeromesh describe: what each live peer serves (methods, contracts with their schemas, events), each service once.
import process from 'node:process'
import { USAGE } from '../usage.js'
import { clusterServices } from '../cluster-services.js'

export async function run (args) {
  const { values, members } = await clusterServices(args, USAGE.describe)
  if (values.help) { process.stdout.write(USAGE.describe + '\n'); return 0 }
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
