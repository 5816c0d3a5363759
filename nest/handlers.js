// Nest's pattern handlers (what a transport strategy gets through addHandler(), wrapped in
// pipes, guards, interceptors and exception filters) as zeromesh methods and subscriptions,
// whether they run on the peer's main thread (server.js) or in its worker threads (thread.js).
//
// - A @MessagePattern is a method of the pattern's name: a string as it is, an object pattern
//   as Nest names it (its keys sorted, JSON). Its reply is the handler's value, or every value
//   of the Observable it returns, in order, once it completes (PROTOCOL.md 4.2.3: a caller
//   that reads one value gets the last, null when none). An Observable cut by the deadline,
//   the caller's cancel or the drain is unsubscribed and its place given back at once.
// - A @MessagePattern with the extra `{ stream: true }` is a stream method: each value of the
//   returned Observable (or each item of a returned async iterable) is a stream item. A
//   ZeromeshClient learns which patterns stream from the peer's service answer.
// - An @EventPattern is a subscription to the event of the pattern's name, in the group its
//   extra `group` names, else the server's `group` option, else a group of this server
//   instance's own (`instance`), so every instance runs it, as Nest's pub/sub transports do. It is
//   acknowledged once its handlers (every handler of the pattern) finished, the Observables
//   they return included; an error reaches the publisher.
// - A pattern tied to a contract (ContractPattern(), ContractEventPattern()) is checked as
//   implement() and on() check it: every method of that contract needs a pattern.
// - An RpcException (or any error the handler's exception filters leave) reaches the caller
//   as a REMOTE error with its message and, when the error object has one, its code; one
//   whose object carries Standard Schema `issues` (invalidInput(), for a validation pipe's
//   exceptionFactory) reaches it as InvalidInputError with them.
import { isObservable } from 'rxjs'
import { ZeromeshContext } from './context.js'
import { implement } from '../peer/implement.js'
import { on, isContract } from '../runtime/contract.js'
import { STREAMING } from '../runtime/stream-marker.js'
import { invalidArgument, RemoteCode } from '../protocol/errors.js'
import { Values } from '../runtime/values.js'

/** The transport id of zeromesh's strategies: @MessagePattern('x', ZEROMESH_TRANSPORT) serves 'x' through zeromesh alone in a hybrid app. */
export const ZEROMESH_TRANSPORT = Symbol.for('zeromesh.transport')

/**
 * @param {Map<string, Function>} messageHandlers  the strategy's (Server#getHandlers())
 * @param {{ group?: string|null, instance?: string }} [options]  `instance`: this server's own name, for the group of an event no option groups (default: the event's name)
 * @returns {{ methods: Record<string, Function>, events: Record<string, { handler: Function, group: string }>, subscriptions: object[] }}
 *   `subscriptions`: those tied to a contract (on()'s), the others in `events`
 */
export function zeromeshHandlers (messageHandlers, options = {}) {
  const methods = {}
  const events = {}
  const subscriptions = []
  const byContract = new Map() // contract -> { c, handlers: { method: fn } }
  for (const [pattern, h] of messageHandlers) {
    const extras = h.extras ?? {}
    const tied = extras.zeromeshContract ?? null
    if (tied !== null && !isContract(tied.contract)) throw invalidArgument(`zeromesh/nest: pattern ${pattern}: its contract must be made by contract()`)
    if (h.isEventHandler) {
      const handler = (payload, ctx) => answerOf(h(payload, new ZeromeshContext([ctx])), ctx.signal).then(() => undefined)
      const wire = tied === null ? pattern : tied.contract.events[tied.name].wire
      const group = extras.group ?? options.group ?? (options.instance === undefined ? wire : `${wire}@${options.instance}`)
      if (tied !== null) subscriptions.push(on(tied.contract, tied.name, handler, { group }))
      else events[pattern] = { handler, group }
      continue
    }
    const stream = extras.stream === true || (tied !== null && tied.contract.methods[tied.name]?.stream === true)
    let fn
    if (stream) {
      fn = (args, ctx) => itemsOf(h(args, new ZeromeshContext([ctx])), ctx.signal)
      fn[STREAMING] = true
    } else {
      // Opened as a stream (a ZeromeshClient's send() to every server), each value is an item as it comes.
      fn = (args, ctx) => ctx.kind === 'stream' ? itemsOf(h(args, new ZeromeshContext([ctx])), ctx.signal) : answerOf(h(args, new ZeromeshContext([ctx])), ctx.signal)
    }
    if (tied === null) { methods[pattern] = fn; continue }
    let entry = byContract.get(tied.contract)
    if (entry === undefined) byContract.set(tied.contract, entry = { handlers: {} })
    entry.handlers[tied.name] = fn
  }
  // A contract's methods, checked as implement() checks them (and stated in the service answer).
  for (const [c, { handlers }] of byContract) {
    const missing = Object.keys(c.methods).filter((m) => !(m in handlers))
    if (missing.length > 0) throw invalidArgument(`zeromesh/nest: contract ${c.name} has no pattern for ${missing.map((m) => c.methods[m].wire).join(', ')}: give each of its methods a ContractPattern(${c.name}, method)`)
    Object.assign(methods, implement(c, handlers))
  }
  return { methods, events, subscriptions }
}

/**
 * The answer of a handler's outcome: its value (null for undefined), or every value of the
 * Observable it resolves to, in order, once it completes (runtime/values.js: a caller that
 * reads one value gets the last). When `signal` aborts (the deadline, the caller's cancel, the
 * drain) the Observable is unsubscribed and the answer rejects at once, so the handler's place
 * is given back. A rejection or an Observable's error becomes remoteError()'s.
 */
export async function answerOf (outcome, signal) {
  let value
  try {
    value = await outcome
  } catch (err) {
    throw remoteError(err)
  }
  if (!isObservable(value)) return value === undefined ? null : value
  return new Promise((resolve, reject) => {
    const values = []
    let ended = false
    let sub = null
    const end = () => { ended = true; signal?.removeEventListener('abort', stop) }
    function stop () {
      if (ended) return
      end()
      sub?.unsubscribe()
      reject(signal.reason ?? new Error('stopped'))
    }
    sub = value.subscribe({ // it may end before subscribe() returns (of(), throwError())
      next: (v) => { if (!ended) values.push(v === undefined ? null : v) },
      error: (err) => { if (!ended) { end(); reject(remoteError(err)) } },
      complete: () => { if (!ended) { end(); resolve(new Values(values)) } },
    })
    if (ended) return
    if (signal?.aborted) stop()
    else signal?.addEventListener('abort', stop, { once: true })
  })
}

/**
 * A stream's items from a handler's outcome: each value of its Observable, or each item of an
 * async iterable it gives (one emitted by an interceptor's Observable too), or the value
 * itself as one item. An Observable cannot wait for the reader: what it emits ahead of the
 * client's credit waits here.
 */
export async function * itemsOf (outcome, signal) {
  let value
  try {
    value = await outcome
  } catch (err) {
    throw remoteError(err)
  }
  if (isAsyncIterable(value)) return yield * value
  if (!isObservable(value)) { if (value !== undefined) yield value; return }
  const queue = []
  let head = 0
  let done = false
  let failure = null
  let wake = null
  let sub = null
  const stop = () => { sub?.unsubscribe(); done = true; wake?.() }
  sub = value.subscribe({ // it may emit and end before subscribe() returns
    next: (v) => { queue.push(v); wake?.() },
    error: (err) => { failure = err; done = true; wake?.() },
    complete: () => { done = true; wake?.() },
  })
  signal?.addEventListener('abort', stop, { once: true })
  try {
    for (;;) {
      if (head < queue.length) {
        const v = queue[head]
        queue[head++] = undefined
        if (head > 1024 && head * 2 > queue.length) { queue.splice(0, head); head = 0 }
        if (isAsyncIterable(v)) yield * v
        else yield v
        continue
      }
      if (done) break
      await new Promise((resolve) => { wake = resolve })
      wake = null
    }
    if (failure !== null) throw remoteError(failure)
  } finally {
    signal?.removeEventListener('abort', stop)
    sub.unsubscribe()
  }
}

/**
 * What the caller gets of a Nest handler's error: Nest's exception filters turn an
 * RpcException into its error (a string, or the object given) and any other error into
 * { status: 'error', message: 'Internal server error' }. The REMOTE error carries its
 * `message` (a string as it is, anything else as JSON) and its `code` when it has one (a
 * string, or a number as text).
 */
export function remoteError (e) {
  if (e instanceof Error) return e
  if (e !== null && typeof e === 'object') {
    const message = typeof e.message === 'string' ? e.message : JSON.stringify(e.message ?? e)
    const err = new Error(message)
    if (typeof e.code === 'string' || typeof e.code === 'number') err.code = String(e.code)
    if (Array.isArray(e.issues)) { // a refused payload (invalidInput(), a pipe's exceptionFactory): the caller gets InvalidInputError with them
      err.issues = e.issues
      err.code ??= RemoteCode.INVALID_INPUT
    }
    return err
  }
  return new Error(String(e))
}

function isAsyncIterable (v) {
  return v !== null && typeof v === 'object' && typeof v[Symbol.asyncIterator] === 'function'
}
