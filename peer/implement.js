// implement(contract, handlers): the handlers of a contract's methods, each checking its input
// before it runs (never trust the wire) and, when asked, its output. The result is a plain
// object of functions named as the wire names them (`orders.get`), so it goes wherever
// handlers go: a Peer's `handlers`, a handler module's default export (worker threads), or
// several spread together. Each function carries its method's description (METHOD), which the
// peer states in its service answer (PROTOCOL.md 4.8). Subscriptions made through the contract
// (the `events` option, on()'s) belong to the contract's name as their group, and ride on the
// result (SUBSCRIPTIONS) wherever it goes.
import { CONTRACT, METHOD, SUBSCRIPTION, SUBSCRIPTIONS, isContract, check, jsonSchemaOf } from '../runtime/contract.js'
import { invalidArgument, InvalidOutputError, ZeromeshError } from '../protocol/errors.js'
import { isStream } from '../protocol/stream-producer.js'

/**
 * @param {object} c          a contract (contract())
 * @param {object} handlers   a function for every method of the contract, and no other
 * @param {{ validateOutput?: boolean, events?: object[] }} [options]  validateOutput: check each
 *   result (each item of a stream) against the output schema (off by default); events: the
 *   subscriptions of this service, made by on(contract, event, handler): their group is this
 *   contract's name
 */
export function implement (c, handlers, options = {}) {
  if (!isContract(c)) throw invalidArgument('implement(contract, handlers): contract must be made by contract(name, { methods })')
  if (handlers === null || typeof handlers !== 'object') throw invalidArgument(`implement(${c.name}, handlers): handlers must be an object with a function for each method: ${Object.keys(c.methods).join(', ')}`)
  const { validateOutput = false, events = [] } = options
  if (typeof validateOutput !== 'boolean') throw invalidArgument(`implement(${c.name}, handlers, options): validateOutput must be true or false`)
  if (!Array.isArray(events) || events.some((e) => e?.[SUBSCRIPTION] !== true)) throw invalidArgument(`implement(${c.name}, handlers, options): events must be an array of subscriptions made by on(contract, event, handler)`)
  for (const name of Object.keys(handlers)) {
    if (!(name in c.methods)) throw invalidArgument(`implement(${c.name}, handlers): ${name} is not a method of the contract (it has ${Object.keys(c.methods).join(', ')})`)
  }
  const out = {}
  // The events this contract publishes, with their payloads' JSON Schemas, for the service answer (4.8.1).
  const published = Object.values(c.events).map((e) => [e.name, jsonSchemaOf(e.schema, 'input')])
  for (const [name, m] of Object.entries(c.methods)) {
    const fn = handlers[name]
    if (typeof fn !== 'function') throw invalidArgument(`implement(${c.name}, handlers): the contract's method ${name} has no handler (a function (input, ctx) => ${m.stream ? 'items' : 'result'})`)
    const wrapped = m.stream ? streaming(m, fn, validateOutput) : requesting(m, fn, validateOutput)
    wrapped[METHOD] = Object.freeze({ contract: c.name, version: c.version, method: name, stream: m.stream, input: jsonSchemaOf(m.input, 'input'), output: jsonSchemaOf(m.output, 'output'), events: published })
    out[m.wire] = wrapped
  }
  Object.defineProperty(out, CONTRACT, { value: c }) // not enumerable: a spread of several keeps only the functions
  Object.defineProperty(out, SUBSCRIPTIONS, { value: Object.freeze(events.map((e) => Object.freeze({ event: e.event, group: c.name, handler: e.handler }))) })
  return out
}

function requesting (m, fn, validateOutput) {
  const what = `invalid input for ${m.wire}`
  const run = (input, ctx) => {
    const result = fn(input, ctx)
    if (!validateOutput) return result
    return result !== null && typeof result === 'object' && typeof result.then === 'function' ? result.then((r) => checkOutput(m, r)) : checkOutput(m, result)
  }
  return (args, ctx) => {
    const input = check(m.input, args, what)
    return input !== null && typeof input === 'object' && typeof input.then === 'function' ? input.then((v) => run(v, ctx)) : run(input, ctx)
  }
}

function streaming (m, fn, validateOutput) {
  const what = `invalid input for ${m.wire}`
  return async function * (args, ctx) {
    const input = await check(m.input, args, what)
    let source = fn(input, ctx)
    if (!isStream(source)) source = await source
    if (!isStream(source)) throw new ZeromeshError(`${m.wire} is a stream in its contract: its handler must return items (an async generator or another async iterable)`)
    if (!validateOutput) return yield * source
    for await (const item of source) yield await checkOutput(m, item)
  }
}

function checkOutput (m, value) {
  return check(m.output, value, `${m.wire} answered what its contract's output schema refuses`, InvalidOutputError)
}

