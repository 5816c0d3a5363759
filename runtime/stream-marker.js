// Which handlers a peer serves as streams (PROTOCOL.md 4.8.2, the SERVICE answer's streams
// element): an async generator function, a contract's method marked `stream: true`
// (implement()), or a function carrying STREAMING (what an adapter such as zeromesh/nest sets
// on the handlers it makes). A thread reports its own to the main thread by name.
import { METHOD } from './contract.js'

/** Set to true on a handler that streams but is not an async generator function. */
export const STREAMING = Symbol.for('zeromesh.streaming')

const AsyncGeneratorFunction = (async function * () {}).constructor

/** Whether handler `fn` is served as a stream. */
export function servesStream (fn) {
  return fn[STREAMING] === true || fn[METHOD]?.stream === true || fn instanceof AsyncGeneratorFunction
}
