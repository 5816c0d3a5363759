// zeromesh members: a peer's view of the membership, with what each live member serves.
import process from 'node:process'
import { USAGE } from '../usage.js'
import { clusterServices } from '../cluster-services.js'

export async function run (args) {
  const { values, members } = await clusterServices(args, USAGE.members)
  if (values.help) { process.stdout.write(USAGE.members + '\n'); return 0 }
  if (values.json) {
    process.stdout.write(JSON.stringify(members) + '\n')
  } else {
    const rows = [['ENDPOINT', 'STATE', 'INCARNATION', 'METHODS', 'VERSION', 'LABELS', 'META']]
    const methods = (s) => s === null ? '?' : s === 'any' ? '(any)' : s.methods.length <= 6 ? s.methods.join(',') : `${s.methods.slice(0, 5).join(',')},+${s.methods.length - 5}`
    // The user's labels: zeromesh's own (zeromesh/events, /streams, /contracts: digests of what
    // it states elsewhere) stay in --json, out of the column.
    const labels = (s) => Object.entries(s.labels).filter(([k]) => !k.startsWith('zeromesh/')).map(([k, v]) => `${k}=${v}`).join(',') || '-'
    for (const m of members) {
      const s = m.serves
      rows.push([m.endpoint, m.state, String(m.incarnation), methods(s), s?.version ?? '-', s === null || s === 'any' ? '-' : labels(s), JSON.stringify(m.meta)])
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
    for (const r of rows) process.stdout.write(r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i])).join('  ') + '\n')
  }
  return 0
}
