// The HTTP routes of a described mesh, the same for the OpenAPI document and the gateway that
// serves it: by default `POST /{contract}/{method}` for a contract's method (its wire name
// `contract.method`, dots made slashes, for a method without a contract), the input the JSON
// body. A `routes` option maps an operation to a route of its own, `{ 'GET /': 'countdown' }`:
// a method so mapped is served there instead of at its default route; a GET, HEAD or DELETE
// takes its input from the query string (an object of strings, a repeated key an array).
import { invalidArgument } from '../protocol/errors.js'

const VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
export const QUERY_VERBS = new Set(['GET', 'DELETE'])
const PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/

/**
 * Reads a `routes` option: `{ 'VERB /path': 'method' | { method, idempotent? } }`, checked where it enters.
 * @returns {Array<{ verb: string, path: string, wire: string, idempotent: boolean|undefined }>}
 */
export function routeOptions (routes) {
  if (routes === undefined) return []
  if (routes === null || typeof routes !== 'object' || Array.isArray(routes)) throw invalidArgument("zeromesh/http: routes must be an object such as { 'GET /': 'countdown', 'POST /orders': 'orders.place' }")
  const out = []
  for (const [key, value] of Object.entries(routes)) {
    const m = /^([A-Z]+) (\S+)$/.exec(key)
    if (m === null || !VERBS.includes(m[1]) || !PATH.test(m[2]) || m[2].includes('?')) throw invalidArgument(`zeromesh/http: route ${JSON.stringify(key)} must be 'VERB /path' with VERB one of ${VERBS.join(', ')} and a path without a query (no path parameters)`)
    const wire = typeof value === 'string' ? value : value?.method
    if (typeof wire !== 'string' || wire.length === 0) throw invalidArgument(`zeromesh/http: route ${JSON.stringify(key)} must name a method, as 'countdown' or { method: 'orders.get', idempotent: true }`)
    const idempotent = typeof value === 'string' ? undefined : value.idempotent
    if (idempotent !== undefined && typeof idempotent !== 'boolean') throw invalidArgument(`zeromesh/http: route ${JSON.stringify(key)}: idempotent must be true or false`)
    if (typeof value === 'object') for (const k of Object.keys(value)) if (k !== 'method' && k !== 'idempotent') throw invalidArgument(`zeromesh/http: route ${JSON.stringify(key)}: unknown key "${k}"; known: method, idempotent`)
    out.push({ verb: m[1], path: m[2], wire, idempotent })
  }
  return out
}

/**
 * Every route of `mesh` (described.js), the mapped ones first, each
 * `{ verb, path, wire, operationId, op, idempotent }` with `op` the described method. A mapped method the
 * mesh does not describe is a method without a contract (open schemas, not a stream).
 */
export function routesOf (mesh, mapped) {
  const ops = new Map()
  for (const c of mesh.contracts.values()) for (const m of c.methods) ops.set(m.wire, m)
  for (const m of mesh.methods) if (!ops.has(m.wire)) ops.set(m.wire, m)
  const out = []
  const seen = new Set()
  const ids = new Map()
  const add = (verb, path, op, idempotent) => {
    const key = `${verb} ${path}`
    if (seen.has(key)) return
    seen.add(key)
    const n = (ids.get(op.wire) ?? 0) + 1
    ids.set(op.wire, n)
    out.push({ verb, path, wire: op.wire, operationId: n === 1 ? op.wire : `${op.wire}-${n}`, op, idempotent })
  }
  const isMapped = new Set()
  for (const r of mapped) {
    const op = ops.get(r.wire) ?? { contract: null, method: r.wire, wire: r.wire, stream: false, input: {}, output: {} }
    isMapped.add(r.wire)
    add(r.verb, r.path, op, r.idempotent)
  }
  for (const op of ops.values()) if (!isMapped.has(op.wire)) add('POST', `/${op.wire.split('.').map(encodeURIComponent).join('/')}`, op)
  return out
}
