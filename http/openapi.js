// openapiOf(source, options): the mesh's methods as an OpenAPI 3.1 document, one operation per
// method at the routes the gateway serves (routes.js), operationId the wire name
// (`orders.get`), tagged by contract, the input and output JSON Schema 2020-12 as the schema
// library made them (described.js), and one error schema built from the code -> HTTP map every
// zeromesh HTTP front uses (answer.js): the `{ error, code, issues }` body, or RFC 9457
// problem+json with `problemJson: true`. A stream method answers server-sent events, one
// `data:` line of JSON per item (the item schema rides in `x-zeromesh-item`: OpenAPI 3.1 has no
// way to give the schema of each event).
import { STATUS_CODES } from 'node:http'
import { httpStatusOfCode, RETRY_AFTER_S } from './answer.js'
import { describedOf } from './described.js'
import { routesOf, routeOptions, QUERY_VERBS } from './routes.js'
import { componentName, placed } from './schemas.js'
import { invalidArgument } from '../protocol/errors.js'

/** The request header that carries a call's deadline, in milliseconds (the gateway reads it). */
export const TIMEOUT_HEADER = 'x-zeromesh-timeout'
const DIALECT = 'https://json-schema.org/draft/2020-12/schema'
const KNOWN = ['title', 'version', 'description', 'servers', 'routes', 'problemJson', 'strict', 'onWarning']

/**
 * @param {unknown} source  a Client, or contracts, implement() results and service descriptors (one or an array)
 * @param {object} [options]
 * @param {string} [options.title]        info.title (default: the contracts' names, or 'zeromesh mesh')
 * @param {string} [options.version]      info.version (default: the contract's version when one contract has one, else '0.0.0')
 * @param {string} [options.description]
 * @param {Array<{ url: string, description?: string }>} [options.servers]
 * @param {Record<string, string|{ method: string }>} [options.routes]  'VERB /path' -> method, instead of its default route
 * @param {boolean} [options.problemJson]  errors as application/problem+json (RFC 9457), not the { error, code, issues } body
 * @param {boolean} [options.strict]       a schema with no JSON Schema throws, instead of an open schema and a warning
 * @param {(message: string) => void} [options.onWarning]  default: process.emitWarning
 */
export function openapiOf (source, options = {}) {
  checkOptions(options, KNOWN, 'openapiOf')
  const mesh = describedOf(source, options)
  return openapiOfDescribed(mesh, routeOptions(options.routes), options)
}

/** The document of an already described mesh and its routes: the gateway's, which holds both. */
export function openapiOfDescribed (mesh, mapped, { title, version, description, servers, problemJson = false } = {}) {
  if (typeof problemJson !== 'boolean') throw invalidArgument('openapiOf: problemJson must be true or false')
  const contracts = [...mesh.contracts.values()]
  const versions = [...new Set(contracts.map((c) => c.version).filter((v) => v !== null))]
  const schemas = {}
  const ref = (name, schema) => {
    const key = componentName(name)
    schemas[key] = placed(schema, `#/components/schemas/${key}`)
    return { $ref: `#/components/schemas/${key}` }
  }
  const errorName = problemJson ? 'ZeromeshProblem' : 'ZeromeshError'
  schemas[errorName] = problemJson ? PROBLEM_SCHEMA : ERROR_SCHEMA
  const paths = {}
  const usedTags = new Set()
  for (const r of routesOf(mesh, mapped)) {
    const { op } = r
    const input = ref(`${op.wire}.input`, op.input)
    const output = ref(`${op.wire}.output`, op.output)
    const operation = {
      operationId: r.operationId,
      summary: op.contract === null ? `${op.wire} (a method without a contract)` : `${op.contract}.${op.method}`,
      ...(op.contract === null ? {} : { tags: [op.contract] }),
      parameters: [{ $ref: '#/components/parameters/Timeout' }, ...(QUERY_VERBS.has(r.verb) ? queryParameters(op.input, input.$ref) : [])],
    }
    if (op.contract !== null) usedTags.add(op.contract)
    if (!QUERY_VERBS.has(r.verb)) operation.requestBody = { description: `The input of ${op.wire}, as JSON`, content: { 'application/json': { schema: input } } }
    operation.responses = {
      200: op.stream
        ? { description: `The items of ${op.wire} as server-sent events: each a \`data:\` line of JSON of the output schema; a failure after the first item as \`event: error\` with the error body`, content: { 'text/event-stream': { schema: { type: 'string' }, 'x-zeromesh-item': output } } }
        : { description: `The output of ${op.wire}`, content: { 'application/json': { schema: output } } },
      ...Object.fromEntries(ERROR_STATUSES.map((s) => [String(s), { $ref: `#/components/responses/${s}` }])),
    }
    paths[r.path] ??= {}
    paths[r.path][r.verb.toLowerCase()] = operation
  }
  const type = problemJson ? 'application/problem+json' : 'application/json'
  const responses = {}
  for (const s of ERROR_STATUSES) {
    responses[s] = {
      description: `${STATUS_CODES[s]}: ${whyOf(s)}`,
      content: { [type]: { schema: { $ref: `#/components/schemas/${errorName}` } } },
      ...(s === 503 ? { headers: { 'Retry-After': { description: `Seconds to wait before trying again (${RETRY_AFTER_S})`, schema: { type: 'integer', minimum: 0 } } } } : {}),
    }
  }
  return {
    openapi: '3.1.1',
    jsonSchemaDialect: DIALECT,
    info: {
      title: title ?? (contracts.length > 0 ? contracts.map((c) => c.name).join(', ') : 'zeromesh mesh'),
      version: version ?? (versions.length === 1 ? versions[0] : '0.0.0'),
      ...(description === undefined ? {} : { description }),
    },
    ...(servers === undefined ? {} : { servers }),
    tags: contracts.filter((c) => usedTags.has(c.name)).map((c) => ({ name: c.name, description: `contract ${c.name}${c.version === null ? '' : `, version ${c.version}`}` })),
    paths,
    components: {
      schemas,
      responses,
      parameters: {
        Timeout: { name: TIMEOUT_HEADER, in: 'header', required: false, description: 'The call\'s deadline in milliseconds (default: the gateway\'s timeout; at most its maxTimeout)', schema: { type: 'integer', minimum: 1 } },
      },
    },
  }
}

/** The statuses an operation may answer besides 200: those of the code -> HTTP map, and 500. */
const ERROR_STATUSES = [...new Set([...Object.values(httpStatusOfCode), 500])].sort((a, b) => a - b)

function whyOf (status) {
  const codes = Object.entries(httpStatusOfCode).filter(([, s]) => s === status).map(([c]) => c)
  if (status === 500) return 'the handler threw (ERR_ZEROMESH_REMOTE) or another failure; its message is not sent'
  const why = { 400: 'the input was refused (with the contract\'s issues); nothing ran', 503: 'nothing ran, or an idempotent call lost its peer (ERR_ZEROMESH_CONNECTION_LOST): try again after Retry-After', 504: 'no answer in time; the work may have run' }[status] ?? ''
  return `${codes.join(', ')}${why === '' ? '' : `: ${why}`}`
}

/** A GET's query parameters: the input object schema's top-level properties, each a reference into it (none when it is open). */
function queryParameters (input, pointer) {
  const props = input?.properties
  if (props === null || typeof props !== 'object') return []
  const required = new Set(Array.isArray(input.required) ? input.required : [])
  const escaped = (name) => encodeURIComponent(name.replace(/~/g, '~0').replace(/\//g, '~1'))
  return Object.keys(props).map((name) => ({ name, in: 'query', required: required.has(name), schema: { $ref: `${pointer}/properties/${escaped(name)}` } }))
}

export function checkOptions (options, known, who) {
  if (options === null || typeof options !== 'object') throw invalidArgument(`${who}(source, options): options must be an object`)
  for (const k of Object.keys(options)) if (!known.includes(k)) throw invalidArgument(`${who}: unknown option "${k}"; known: ${known.join(', ')}`)
}

const ISSUES = {
  type: 'array',
  description: 'What the contract refused (a 400): each the path of keys and indexes to the field and the schema\'s message, never the value',
  items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'array', items: { type: ['string', 'integer'] } }, message: { type: 'string' } } },
}
const CODE = { type: ['string', 'null'], description: 'The zeromesh error code (ERR_ZEROMESH_...): match on it, never on the message' }

const ERROR_SCHEMA = {
  type: 'object',
  description: 'A zeromesh error as an HTTP answer (zeromesh/http httpAnswerOf): a 500\'s message is \'internal error\'',
  required: ['error', 'code'],
  properties: { error: { type: 'string' }, code: CODE, issues: ISSUES },
}

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'A zeromesh error as RFC 9457 problem details: detail is httpAnswerOf\'s error, with its code and issues',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, code: CODE, issues: ISSUES },
}
