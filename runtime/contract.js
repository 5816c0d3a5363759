// Contracts (docs/guides/contracts.md): a service described once, in a plain module that peers
// and clients both import. Each method has an input and an output schema, any Standard Schema
// v1 validator (zod, valibot, arktype...: zeromesh depends on none of them), and `stream: true`
// when it streams; each event the service publishes has the schema of its payload. On the
// wire a contract's method `get` of contract `orders` is `orders.get`, its event `placed` the
// event `orders.placed`.
import validVersion from 'semver/functions/valid.js'
import { invalidArgument, InvalidInputError } from '../protocol/errors.js'
import { wireIssues, readIssues, issuesText } from '../protocol/issues.js'

/** Marks a contract made by contract(); a handler made by implement() carries METHOD (its method's description). */
export const CONTRACT = Symbol.for('zeromesh.contract')
export const METHOD = Symbol.for('zeromesh.contract-method')
/** Marks a subscription made by on(); an implement() result carries SUBSCRIPTIONS (its events option's). */
export const SUBSCRIPTION = Symbol.for('zeromesh.subscription')
export const SUBSCRIPTIONS = Symbol.for('zeromesh.subscriptions')

const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

/**
 * A contract: `name` (letters, digits, '_' and '-'), an optional semver `version`, `methods`,
 * each `{ input, output, stream? }`, and `events`, the payload schema of each event the
 * service publishes. At least one method or event. Throws InvalidArgumentError naming what is
 * wrong.
 */
export function contract (name, definition) {
  if (typeof name !== 'string' || !NAME.test(name)) throw invalidArgument(`contract(name, ...): name must be 1 to 64 letters, digits, '_' or '-', starting with a letter or '_' (no dots: a method travels as name.method), got ${JSON.stringify(name)}`)
  if (definition === null || typeof definition !== 'object') throw invalidArgument(`contract("${name}", definition): definition must be { version?, methods: { method: { input, output, stream? } }, events?: { event: schema } }`)
  const { version = null, methods = {}, events = {} } = definition
  for (const k of Object.keys(definition)) if (!['version', 'methods', 'events'].includes(k)) throw invalidArgument(`contract("${name}"): unknown key "${k}"; known: version, methods, events`)
  if (version !== null && (typeof version !== 'string' || validVersion(version) === null)) throw invalidArgument(`contract("${name}"): version must be a semantic version such as 1.2.0, got ${JSON.stringify(version)}`)
  if (methods === null || typeof methods !== 'object' || events === null || typeof events !== 'object' || Object.keys(methods).length + Object.keys(events).length === 0) {
    throw invalidArgument(`contract("${name}"): methods and events must name at least one method or event, as { methods: { get: { input, output } } } or { events: { placed: schema } }`)
  }
  if ('events' in methods && Object.keys(events).length > 0) throw invalidArgument(`contract("${name}"): a contract with events has no method named "events" (client.proxy(contract).events holds its events)`)
  const evs = Object.create(null)
  for (const [e, schema] of Object.entries(events)) {
    if (!NAME.test(e)) throw invalidArgument(`contract("${name}"): event name ${JSON.stringify(e)} must be 1 to 64 letters, digits, '_' or '-', starting with a letter or '_'`)
    if (!isStandardSchema(schema)) throw invalidArgument(`contract("${name}"): events.${e} must be the Standard Schema v1 validator of its payload (zod, valibot, arktype, ...)`)
    evs[e] = Object.freeze({ schema, wire: `${name}.${e}`, contract: name, name: e })
  }
  const out = Object.create(null)
  for (const [m, def] of Object.entries(methods)) {
    if (!NAME.test(m)) throw invalidArgument(`contract("${name}"): method name ${JSON.stringify(m)} must be 1 to 64 letters, digits, '_' or '-', starting with a letter or '_'`)
    if (def === null || typeof def !== 'object') throw invalidArgument(`contract("${name}"): method ${m} must be { input, output, stream? }`)
    for (const side of ['input', 'output']) {
      if (!isStandardSchema(def[side])) throw invalidArgument(`contract("${name}"): ${m}.${side} must be a Standard Schema v1 validator (zod, valibot, arktype, ...: an object with a '~standard' property of version 1)`)
    }
    if (def.stream !== undefined && typeof def.stream !== 'boolean') throw invalidArgument(`contract("${name}"): ${m}.stream must be true or false`)
    out[m] = Object.freeze({ input: def.input, output: def.output, stream: def.stream === true, wire: `${name}.${m}` })
  }
  return Object.freeze({ [CONTRACT]: true, name, version, methods: Object.freeze(out), events: Object.freeze(evs) })
}

/**
 * A subscription to `contract`'s `event` (its name in the contract, such as 'placed'): the
 * payload is checked against the event's schema before `handler` runs, and the handler gets
 * the schema's output. For implement()'s `events` option, where its group is the implementing
 * contract's name, or a Peer's `events` option and peer.subscribe, where it is `group`, or the
 * event's own name by default.
 * @param {object} c  the contract that publishes the event
 * @param {string} event
 * @param {(payload: unknown, ctx: object) => unknown} handler
 * @param {{ group?: string }} [options]
 */
export function on (c, event, handler, options = {}) {
  if (!isContract(c)) throw invalidArgument('on(contract, event, handler): contract must be made by contract(name, { events })')
  const e = c.events[event]
  if (e === undefined) throw invalidArgument(`on(${c.name}, ${JSON.stringify(event)}, handler): the contract has no such event (it has ${Object.keys(c.events).join(', ') || 'none'})`)
  if (typeof handler !== 'function') throw invalidArgument(`on(${c.name}, "${event}", handler): handler must be a function (payload, ctx) => ...`)
  const group = options?.group ?? e.wire
  const what = `invalid payload for ${e.wire}`
  const checked = (payload, ctx) => {
    const value = check(e.schema, payload, what)
    return value !== null && typeof value === 'object' && typeof value.then === 'function' ? value.then((v) => handler(v, ctx)) : handler(value, ctx)
  }
  return Object.freeze({ [SUBSCRIPTION]: true, event: e.wire, group, handler: checked })
}

export function isContract (c) {
  return c !== null && typeof c === 'object' && c[CONTRACT] === true
}

function isStandardSchema (s) {
  const std = s?.['~standard']
  return std !== null && typeof std === 'object' && std.version === 1 && typeof std.validate === 'function'
}

/**
 * Runs `schema` on `value`: the schema's output (a transforming schema's, coerced and
 * defaulted), or a thrown `ErrorClass` with the schema's issues (path and message, never the
 * value). Synchronous when the schema is; a promise when it is asynchronous.
 */
export function check (schema, value, what, ErrorClass = InvalidInputError) {
  const r = schema['~standard'].validate(value)
  if (r !== null && typeof r === 'object' && typeof r.then === 'function') return r.then((res) => outcome(res, what, ErrorClass))
  return outcome(r, what, ErrorClass)
}

function outcome (r, what, ErrorClass) {
  if (r.issues === undefined) return r.value
  const issues = readIssues(wireIssues(r.issues)) // paths of keys and indexes, cut to what travels
  throw new ErrorClass(`${what}: ${issuesText(issues)}`, { issues })
}

/** The JSON Schema of a schema's `input` or `output` when it gives one (Standard JSON Schema), else null. */
export function jsonSchemaOf (schema, side) {
  const make = schema['~standard'].jsonSchema?.[side]
  if (typeof make !== 'function') return null
  try {
    const js = make({ target: 'draft-2020-12' })
    return js === null || typeof js !== 'object' ? null : JSON.parse(JSON.stringify(js)) // plain JSON: it travels in the service answer
  } catch {
    return null // a schema JSON Schema cannot express (a transform, a custom check)
  }
}
