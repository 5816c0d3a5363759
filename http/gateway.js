// gateway(client, options): a node:http request handler `(req, res, next?)` that serves the
// mesh's methods over HTTP at the routes of its OpenAPI document (routes.js), and the documents
// themselves (/openapi.json, /asyncapi.json). Express, Nest's Express adapter and node:http
// mount it as is (`app.use(gw)`, `http.createServer(gw)`); a route it does not serve goes to
// `next` when there is one, else answers 404.
//
// A call: the input from the JSON body (a GET's or DELETE's from the query string), checked
// against the contract's input schema before it is sent when the gateway holds the contract
// (the peer checks it again), the deadline from the x-zeromesh-timeout header (milliseconds, at
// most maxTimeout) or the gateway's timeout, then client.request (client.stream for a stream
// method: server-sent events). Errors answer by the one code -> HTTP map (answer.js), with
// Retry-After on a 503. The routes are those of the contracts given and, with `mesh` (the
// default), of what the client's peers say they serve, looked at again when a request finds
// no route (at most once a meshCheckMs) or a document is asked for, and made again when the
// peers' statements changed.
import { STATUS_CODES } from 'node:http'
import { httpAnswerOf } from './answer.js'
import { describedOf, defaultWarning } from './described.js'
import { routesOf, routeOptions, QUERY_VERBS } from './routes.js'
import { openapiOfDescribed, checkOptions, TIMEOUT_HEADER } from './openapi.js'
import { asyncapiOfDescribed } from './asyncapi.js'
import { CONTRACT, check } from '../runtime/contract.js'
import { invalidArgument, InvalidInputError } from '../protocol/errors.js'

/** The gateway's defaults, each defined here once. */
export const gatewayDefaults = Object.freeze({
  maxTimeout: 60_000, //       the most a caller's x-zeromesh-timeout may ask, in ms
  maxBody: 1024 * 1024, //     the largest JSON body read, in bytes (413 beyond)
  abortOnClose: false, //      a request whose caller hangs up is aborted in the client (its signal; the peer's ctx.signal): about 20 us of CPU a call on a cold front, so off unless asked (a stream's caller hanging up always ends it)
  meshCheckMs: 1000, //        a request with no route looks at the peers' statements again at most this often (a route beside the gateway's costs nothing more)
  openapiPath: '/openapi.json',
  asyncapiPath: '/asyncapi.json',
})

const KNOWN = ['contracts', 'mesh', 'routes', 'timeout', 'maxTimeout', 'maxBody', 'meshCheckMs', 'abortOnClose', 'openapiPath', 'asyncapiPath', 'problemJson', 'title', 'version', 'description', 'servers', 'strict', 'onWarning']
const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * @param {import('../client/index.js').Client} client
 * @param {object} [options]  docs/reference/http.md
 * @returns {((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, next?: (err?: unknown) => void) => void) & { openapi(): object, asyncapi(): object }}
 */
export function gateway (client, options = {}) {
  if (client === null || typeof client !== 'object' || typeof client.request !== 'function' || typeof client.peers !== 'function') throw invalidArgument('gateway(client, options): client must be a zeromesh Client')
  checkOptions(options, KNOWN, 'gateway')
  const o = { ...gatewayDefaults, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) }
  const { contracts = [], mesh = true, timeout, maxTimeout, maxBody, meshCheckMs, abortOnClose, openapiPath, asyncapiPath, problemJson = false } = o
  if (!Array.isArray(contracts)) throw invalidArgument('gateway: contracts must be an array of contracts (contract()) or implement() results')
  if (typeof mesh !== 'boolean') throw invalidArgument('gateway: mesh must be true or false')
  if (typeof problemJson !== 'boolean') throw invalidArgument('gateway: problemJson must be true or false')
  if (typeof abortOnClose !== 'boolean') throw invalidArgument('gateway: abortOnClose must be true or false')
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0)) throw invalidArgument(`gateway: timeout must be a positive whole number of milliseconds, got ${timeout}`)
  if (!(Number.isInteger(maxTimeout) && maxTimeout > 0)) throw invalidArgument(`gateway: maxTimeout must be a positive whole number of milliseconds, got ${maxTimeout}`)
  if (!(Number.isInteger(meshCheckMs) && meshCheckMs >= 0)) throw invalidArgument(`gateway: meshCheckMs must be a whole number of milliseconds, got ${meshCheckMs}`)
  if (!(Number.isInteger(maxBody) && maxBody >= 0)) throw invalidArgument(`gateway: maxBody must be a whole number of bytes, got ${maxBody}`)
  for (const [k, v] of [['openapiPath', openapiPath], ['asyncapiPath', asyncapiPath]]) if (v !== null && (typeof v !== 'string' || !v.startsWith('/'))) throw invalidArgument(`gateway: ${k} must be a path such as '/openapi.json', or null to serve none`)
  const mapped = routeOptions(o.routes)
  const warned = new Set()
  const onWarning = o.onWarning ?? defaultWarning
  const warnOnce = (m) => { if (!warned.has(m)) { warned.add(m); onWarning(m) } }
  const docOptions = { title: o.title, version: o.version, description: o.description, servers: o.servers, problemJson }
  // The input schema of each method whose contract is in hand: checked before the call.
  const inputs = new Map()
  for (const c of contracts) {
    const k = c?.[CONTRACT] === true ? c : c?.[CONTRACT]
    if (k === undefined || k === null || typeof k !== 'object') throw invalidArgument('gateway: contracts must be an array of contracts (contract()) or implement() results')
    for (const m of Object.values(k.methods)) inputs.set(m.wire, m.input)
  }

  let described = null
  let table = null // 'VERB /path' -> route
  let seen = null // what the peers said when the table was made
  const build = () => {
    described = describedOf(mesh ? [...contracts, client] : contracts, { strict: o.strict, onWarning: warnOnce })
    table = new Map()
    for (const r of routesOf(described, mapped)) table.set(`${r.verb} ${r.path}`, { ...r, input: inputs.get(r.wire) ?? null, what: `invalid input for ${r.wire}` })
  }
  /** Makes the table again when the peers' statements changed since it was made (`always`: whenever it was last looked). */
  let looked = -Infinity
  const refresh = (always = true) => {
    if (!mesh && table !== null) return false
    if (!always && performance.now() - looked < meshCheckMs) return false
    looked = performance.now()
    const now = mesh ? statementsOf(client) : ''
    if (table !== null && now === seen) return false
    seen = now
    build()
    return true
  }
  refresh()
  looked = -Infinity // the first request with no route looks at once

  const answerError = (res, err) => {
    const { status, retryAfter, body } = err instanceof TooLarge ? { status: 413, retryAfter: null, body: { error: err.message, code: null } } : httpAnswerOf(err)
    const headers = retryAfter === null ? {} : { 'retry-after': String(retryAfter) }
    if (problemJson) return send(res, status, JSON.stringify({ type: 'about:blank', title: STATUS_CODES[status], status, detail: body.error, ...body, error: undefined }), 'application/problem+json', headers)
    send(res, status, JSON.stringify(body), JSON_TYPE, headers)
  }

  const handler = (req, res, next) => {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    const verb = req.method === 'HEAD' ? 'GET' : req.method
    if (verb === 'GET' && (path === openapiPath || path === asyncapiPath)) {
      refresh()
      return send(res, 200, JSON.stringify(path === openapiPath ? openapiOfDescribed(described, mapped, docOptions) : asyncapiOfDescribed(described, docOptions)), JSON_TYPE)
    }
    const key = `${verb} ${path}`
    let route = table.get(key)
    if (route === undefined && refresh(false)) route = table.get(key)
    if (route === undefined) {
      if (typeof next === 'function') return next()
      return send(res, 404, JSON.stringify({ error: `no route ${verb} ${path}`, code: null }), JSON_TYPE)
    }
    let callTimeout = timeout
    const asked = req.headers[TIMEOUT_HEADER]
    if (asked !== undefined) {
      const ms = Number(asked)
      if (!(Number.isInteger(ms) && ms > 0)) return answerError(res, new InvalidInputError(`${TIMEOUT_HEADER} must be a positive whole number of milliseconds`, { issues: [] }))
      callTimeout = Math.min(ms, maxTimeout)
    }
    if (QUERY_VERBS.has(verb)) return call(route, q === -1 ? {} : queryOf(url.slice(q + 1)), callTimeout, res)
    if (req.body !== undefined) return call(route, req.body, callTimeout, res) // a body parser (express.json(), Fastify's) read it already
    readJson(req, maxBody).then((args) => call(route, args, callTimeout, res), (err) => answerError(res, err))
  }

  const call = (route, args, callTimeout, res) => {
    try {
      if (route.input !== null) {
        const checked = check(route.input, args, route.what)
        if (checked !== null && typeof checked === 'object' && typeof checked.then === 'function') return checked.then(() => send1(route, args, callTimeout, res), (err) => answerError(res, err))
      }
    } catch (err) {
      return answerError(res, err)
    }
    send1(route, args, callTimeout, res)
  }

  const send1 = (route, args, callTimeout, res) => {
    // Options only when there are some: the client checks every options object it is given (runtime/options.js), none costs nothing.
    let opts
    let ac = null
    if (abortOnClose && !route.op.stream) {
      ac = new AbortController()
      res.once('close', () => { if (!res.writableFinished) ac.abort() })
      opts = { signal: ac.signal }
    }
    if (callTimeout !== undefined) (opts ??= {}).timeout = callTimeout
    if (route.idempotent !== undefined) (opts ??= {}).idempotent = route.idempotent
    let pending
    try {
      if (route.op.stream) return streamTo(res, client.stream(route.wire, args, opts), answerError)
      pending = client.request(route.wire, args, opts)
    } catch (err) { // refused at once (a closed client, arguments it cannot send)
      return answerError(res, err)
    }
    pending.then(
      (value) => {
        let body
        try { body = value === undefined ? 'null' : JSON.stringify(value) } catch (err) { return answerError(res, err) } // a value JSON cannot hold (a BigInt): 500
        send(res, 200, body, JSON_TYPE)
      },
      (err) => { if (ac === null || !ac.signal.aborted) answerError(res, err) })
  }

  handler.openapi = () => { refresh(); return openapiOfDescribed(described, mapped, docOptions) }
  handler.asyncapi = () => { refresh(); return asyncapiOfDescribed(described, docOptions) }
  return handler
}

/** A stream's items as server-sent events; a failure before the first item as an ordinary error answer. */
async function streamTo (res, items, answerError) {
  let first = true
  res.once('close', () => { if (!res.writableFinished) items.return?.() })
  try {
    for await (const item of items) {
      if (first) { res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }); first = false }
      res.write(`data: ${JSON.stringify(item === undefined ? null : item)}\n\n`)
    }
    if (first) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
    res.end()
  } catch (err) {
    if (res.destroyed) return
    if (first) return answerError(res, err)
    res.end(`event: error\ndata: ${JSON.stringify(httpAnswerOf(err).body)}\n\n`)
  }
}

/** What the peers say they serve, as one string: it changes when their statements change. */
function statementsOf (client) {
  let s = ''
  for (const p of client.peers()) {
    if (p.state === 'down' || p.service === null || p.service === undefined) continue
    s += p.endpoint + '\n'
    s += p.service === 'any' ? 'any\n' : `${p.service.labels?.['zeromesh/contracts'] ?? ''} ${p.service.methods.join(',')} ${p.service.streams.join(',')} ${p.service.events.map((e) => e.event + '/' + e.group).join(',')}\n`
  }
  return s
}

/** The query string as an object of strings; a key given more than once, an array of them. */
function queryOf (qs) {
  const out = {}
  for (const [k, v] of new URLSearchParams(qs)) {
    if (k === '__proto__') continue
    if (!Object.hasOwn(out, k)) out[k] = v
    else if (Array.isArray(out[k])) out[k].push(v)
    else out[k] = [out[k], v]
  }
  return out
}

/** A body over maxBody: answered 413. */
class TooLarge extends Error {}

/** The request's JSON body (undefined when empty), at most `max` bytes: InvalidInputError (400) for bad JSON, TooLarge (413) beyond. */
function readJson (req, max) {
  return new Promise((resolve, reject) => {
    const chunks = []
    let size = 0
    req.on('data', (c) => {
      size += c.length
      if (size > max) { req.removeAllListeners('data'); req.resume(); reject(new TooLarge(`the body is over ${max} bytes (the gateway's maxBody)`)); return }
      chunks.push(c)
    })
    req.on('error', reject)
    req.on('end', () => {
      if (size > max) return
      const text = Buffer.concat(chunks).toString('utf8')
      if (text.trim() === '') return resolve(undefined)
      try { resolve(JSON.parse(text)) } catch { reject(new InvalidInputError('the body is not JSON', { issues: [] })) }
    })
  })
}

function send (res, status, body, type, headers = {}) {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, { ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
