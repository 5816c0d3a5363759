// Where a peer's handlers run, from its `handlers` option (docs/reference/handlers.md):
// functions given as they are (already in the service, peer.js), modules loaded on
// the main thread (threads: 0), or modules loaded by a pool of worker threads, ready before
// the socket takes requests. A module's methods join what serve() added before start (serve
// wins).
import { WorkerPool } from './worker-pool.js'
import { loadHandlerModules, loadModuleMiddleware, loadFailure, subscriptionOf } from './handler-module.js'
import { invalidArgument } from '../protocol/errors.js'
import { METHOD } from '../runtime/contract.js'
import { STREAMING } from '../runtime/stream-marker.js'

/**
 * Loads the handler modules into `own` (service.js), and their `middleware` (on this, the
 * main thread) onto the end of `middleware`. Resolves with the WorkerPool the handlers run
 * in, or null when they run on the main thread; rejects with a coded error, nothing left running.
 * @param {object} o     the peer's resolved options (handlers, threads, resourceLimits, capacity, clock)
 * @param {import('./service.js').OwnService} own
 * @param {Function[]} middleware  the peer's chain (peer.use()'s first)
 * @param {(err: Error) => void} onEmpty  no thread could be kept (worker-pool.js)
 * @param {{ publish: Function, broadcast: Function }} [publisher]  how a thread's handlers publish events (ctx.publish)
 */
export async function startHandlers (o, own, middleware, onEmpty, publisher) {
  const modules = o.handlers
  if (!Array.isArray(modules)) return null
  const failed = (err, how) => invalidArgument(err?.duplicate
    ? `handlers modules: ${err.message}`
    : `handlers module ${err?.moduleUrl ?? modules.join(', ')} could not be loaded${how}: ${loadFailure(err, err?.moduleUrl ?? modules[0])}`)
  let handlers
  let withMiddleware
  let subscriptions = []
  let pool = null
  if (o.threads === 0) {
    try {
      ({ handlers, subscriptions, withMiddleware } = await loadHandlerModules(modules))
    } catch (err) {
      throw failed(err, '')
    }
  } else {
    // A thread that crashes is replaced, and said once with its error: the request it ran fails
    // ERR_ZEROMESH_REMOTE with remote code ERR_ZEROMESH_WORKER_EXIT (docs/guides/deploying.md).
    const onCrash = (message) => o.logger.error({ threads: o.threads }, `${message}; a new thread takes its place`)
    pool = new WorkerPool({ modules, threads: o.threads, resourceLimits: o.resourceLimits, clock: o.clock, onEmpty, publisher, onCrash })
    let methods
    try {
      methods = await pool.start()
    } catch (err) {
      await pool.stop()
      throw failed(err, ' in a worker thread')
    }
    if (methods.length === 0) {
      await pool.stop()
      throw invalidArgument(`handlers module${modules.length === 1 ? '' : 's'} ${modules.join(', ')} export${modules.length === 1 ? 's' : ''} no functions`)
    }
    handlers = {}
    for (const m of methods) {
      const sub = subscriptionOf(m) // an event's subscription, run in the thread as a method is
      if (sub !== null) {
        const handler = pool.eachThread.has(m) ? (payload, ctx) => pool.runOnEach(m, payload, ctx) : (payload, ctx) => pool.run(m, payload, ctx)
        subscriptions.push({ event: sub[0], group: sub[1], handler })
        continue
      }
      handlers[m] = (args, ctx) => pool.run(m, args, ctx)
      handlers[m].stream = (args, ctx, so) => pool.stream(m, args, ctx, so) // a stream runs in the thread too (streams.js)
      if (pool.described[m] !== undefined) handlers[m][METHOD] = pool.described[m] // its contract, for the service answer; its checks run in the thread
      if (pool.streaming.has(m)) handlers[m][STREAMING] = true // served as a stream, for the service answer
    }
    if (o.capacity === undefined) own.capacity = pool.threads.length
    withMiddleware = pool.withMiddleware
  }
  try {
    middleware.push(...await loadModuleMiddleware(withMiddleware))
  } catch (err) {
    await pool?.stop()
    throw err
  }
  for (const name of Object.keys(own.handlers)) delete handlers[name]
  try {
    own.addAll(handlers)
    own.subscribeAll(subscriptions.filter((sub) => own.subscriptions.handler(sub.event, sub.group) === undefined)) // subscribe() before start wins, as serve() does
  } catch (err) {
    await pool?.stop()
    throw err
  }
  return pool
}
