// The contracts a peer serves, as its SERVICE answer carries them (PROTOCOL.md 4.8): the
// optional eighth element `[[name, version|nil, [[method, stream, input|nil, output|nil], ...], events?], ...]`,
// each input and output a JSON Schema (a map) or nil; `events`, when the contract publishes
// any, `[[event, payload|nil], ...]` (4.11). A change of contract changes the
// descriptor's digest through the label CONTRACTS_LABEL (the digest of this element), so
// every client, older ones too, asks the peer again.
import { Limits } from './constants.js'
import { packr } from './msgpack.js'
import { fnv1a } from './fnv.js'

/** The label a peer with contracts states: the FNV-1a digest of its contracts element, 8 hex digits. */
export const CONTRACTS_LABEL = 'zeromesh/contracts'

/**
 * The contracts element of the methods' descriptions (implement()'s METHOD, keyed by wire
 * name): grouped by contract in name order, methods in name order. A schema whose packed
 * size passes Limits.maxSchemaBytes is left out (nil), and every schema when the element
 * would pass Limits.maxContractsBytes. Returns { element, dropped } (schemas left out), or
 * null when no method has a contract.
 */
export function contractsElement (described) {
  const byContract = new Map()
  for (const d of described) {
    let c = byContract.get(d.contract)
    if (c === undefined) byContract.set(d.contract, c = { version: d.version ?? null, methods: [], events: d.events ?? [] })
    c.methods.push(d)
  }
  if (byContract.size === 0) return null
  let dropped = 0
  const fit = (schema) => {
    if (schema == null) return null
    if (packr.pack(schema).length <= Limits.maxSchemaBytes) return schema
    dropped++
    return null
  }
  const element = [...byContract.keys()].sort().map((name) => {
    const c = byContract.get(name)
    const methods = c.methods.sort((a, b) => (a.method < b.method ? -1 : 1)).map((m) => [m.method, m.stream, fit(m.input), fit(m.output)])
    if (c.events.length === 0) return [name, c.version, methods]
    return [name, c.version, methods, [...c.events].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([e, payload]) => [e, fit(payload)])]
  })
  if (packr.pack(element).length > Limits.maxContractsBytes) {
    for (const [, , methods, events] of element) {
      for (const m of methods) { if (m[2] !== null) dropped++; if (m[3] !== null) dropped++; m[2] = null; m[3] = null }
      for (const e of events ?? []) { if (e[1] !== null) dropped++; e[1] = null }
    }
  }
  return { element, dropped }
}

/** The CONTRACTS_LABEL value of an element: FNV-1a (4.8) of its canonical JSON (keys sorted), 8 hex digits. */
export function contractsDigest (element) {
  return fnv1a(canonical(element)).toString(16).padStart(8, '0')
}

function canonical (v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
  return JSON.stringify(v ?? null)
}

/**
 * A received contracts element as
 * `[{ name, version, methods: [{ name, method, stream, input, output }], events: [{ name, event, payload }] }]`
 * (`name` of a method or an event is its wire name), or null when absent or malformed (the
 * answer is kept without it: routing never depends on contracts).
 */
export function readContracts (v) {
  if (!Array.isArray(v) || v.length > Limits.maxMethods) return null
  const out = []
  for (const c of v) {
    if (!Array.isArray(c) || typeof c[0] !== 'string' || c[0].length > Limits.maxMethodLength || (c[1] !== null && typeof c[1] !== 'string') || !Array.isArray(c[2])) return null
    const methods = []
    for (const m of c[2]) {
      if (!Array.isArray(m) || typeof m[0] !== 'string' || m[0].length > Limits.maxMethodLength || typeof m[1] !== 'boolean' || !isSchema(m[2]) || !isSchema(m[3])) return null
      methods.push({ name: `${c[0]}.${m[0]}`, method: m[0], stream: m[1], input: m[2], output: m[3] })
    }
    const events = []
    if (c.length > 3 && c[3] !== null) {
      if (!Array.isArray(c[3])) return null
      for (const e of c[3]) {
        if (!Array.isArray(e) || typeof e[0] !== 'string' || e[0].length > Limits.maxMethodLength || !isSchema(e[1])) return null
        events.push({ name: `${c[0]}.${e[0]}`, event: e[0], payload: e[1] })
      }
    }
    out.push({ name: c[0], version: c[1], methods, events })
  }
  return out
}

function isSchema (s) {
  return s === null || (typeof s === 'object' && !Array.isArray(s)) || typeof s === 'boolean' // JSON Schema: an object, or true/false
}
