// client.proxy(contract): an object with one function per method of a contract, taking its
// input and resolving to its output (a stream method returns the items as an async
// iterable), each called through client.request() or client.stream() under the method's wire
// name with the usual options; its `events`, one { publish, broadcast } per event the contract
// publishes. The input (a payload) is checked here first, so a bad one fails at once with the
// error the peer would give (InvalidInputError), with no round trip; the original input is what
// is sent (the peer checks it again and hands its handler the schema's output).
import { isContract, check } from '../runtime/contract.js'
import { invalidArgument, InvalidOutputError } from '../protocol/errors.js'

/**
 * @param {object} c  a contract (contract())
 * @param {{ request: Function, stream: Function, publish: Function, broadcast: Function }} calls  the client's calls
 * @param {{ validateInput?: boolean, validateOutput?: boolean }} [options]
 */
export function contractProxy (c, calls, options = {}) {
  if (!isContract(c)) throw invalidArgument('client.proxy(contract): contract must be made by contract(name, { methods })')
  const { validateInput = true, validateOutput = false } = options ?? {}
  if (typeof validateInput !== 'boolean' || typeof validateOutput !== 'boolean') throw invalidArgument('client.proxy(contract, options): validateInput and validateOutput must be true or false')
  const service = {}
  for (const [name, m] of Object.entries(c.methods)) {
    const what = `invalid input for ${m.wire}`
    const output = (value) => check(m.output, value, `${m.wire} answered what its contract's output schema refuses`, InvalidOutputError)
    if (m.stream) {
      service[name] = async function * (input, opts) {
        if (validateInput) await check(m.input, input, what)
        if (!validateOutput) return yield * calls.stream(m.wire, input, opts)
        for await (const item of calls.stream(m.wire, input, opts)) yield await output(item)
      }
      continue
    }
    const send = (input, opts) => {
      const result = calls.request(m.wire, input, opts)
      return validateOutput ? result.then(output) : result
    }
    service[name] = (input, opts) => {
      if (!validateInput) return send(input, opts)
      let checked
      try {
        checked = check(m.input, input, what)
      } catch (err) {
        return Promise.reject(err)
      }
      return checked !== null && typeof checked === 'object' && typeof checked.then === 'function' ? checked.then(() => send(input, opts)) : send(input, opts)
    }
  }
  // Its events: each publishes or broadcasts the event, its payload checked first.
  if (Object.keys(c.events).length > 0) {
    const events = {}
    for (const [name, e] of Object.entries(c.events)) {
      const what = `invalid payload for ${e.wire}`
      const send = (how) => (payload, opts) => {
        if (!validateInput) return calls[how](e.wire, payload, opts)
        let checked
        try {
          checked = check(e.schema, payload, what)
        } catch (err) {
          return Promise.reject(err)
        }
        return checked !== null && typeof checked === 'object' && typeof checked.then === 'function' ? checked.then(() => calls[how](e.wire, payload, opts)) : calls[how](e.wire, payload, opts)
      }
      events[name] = Object.freeze({ publish: send('publish'), broadcast: send('broadcast') })
    }
    service.events = Object.freeze(events)
  }
  return Object.freeze(service)
}
