// A worker thread of a peer's pool: loads the handler module, then runs one request at a
// time and posts back its result or error. Its `ctx` has what the main thread's has, with the
// deadline on this thread's clock.
import { parentPort, workerData } from 'node:worker_threads'
import { collectHandlers } from './handler-module.js'

const handlers = collectHandlers(await import(workerData.module))
parentPort.postMessage({ type: 'ready', methods: Object.keys(handlers) })

const running = new Map() // task id -> AbortController: the client's cancel aborts ctx.signal

parentPort.on('message', (m) => {
  if (m.type === 'cancel') running.get(m.id)?.abort(new Error('cancelled by the client'))
  else run(m)
})

async function run (task) {
  const deadline = task.remainingMs > 0 ? Date.now() + task.remainingMs : Infinity
  const cancel = new AbortController()
  running.set(task.id, cancel)
  const timeout = AbortSignal.timeout(Math.min(2 ** 31 - 1, Math.max(1, task.remainingMs > 0 ? task.remainingMs : 2 ** 31 - 1)))
  const ctx = {
    method: task.method,
    requestId: task.requestId,
    endpoint: task.endpoint,
    timeoutMs: task.timeoutMs,
    deadline,
    remaining: () => Math.max(0, deadline - Date.now()),
    signal: AbortSignal.any([cancel.signal, timeout]),
  }
  try {
    const value = await handlers[task.method](task.args, ctx)
    parentPort.postMessage({ type: 'done', id: task.id, ok: true, value })
  } catch (err) {
    let message = err instanceof Error ? err.message : String(err)
    const code = typeof err?.code === 'string' ? err.code : null
    try {
      parentPort.postMessage({ type: 'done', id: task.id, ok: false, message, code })
    } catch {
      message = 'handler error could not be passed back'
      parentPort.postMessage({ type: 'done', id: task.id, ok: false, message, code: null })
    }
  } finally {
    running.delete(task.id)
  }
}
