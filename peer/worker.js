// A worker thread of a peer's pool: loads the handler modules, then runs the tasks it is
// handed, one at a time and in order, and posts their results back. Under load the pool
// hands a thread several short tasks in one message (worker-pool.js); their results go back
// together when the batch is done, or before the next task starts once they have waited
// RESULTS_WAIT_MS, or before a task of a method that takes that long or more (or was never
// timed here): a slow task does not hold the results of the quick ones before it, unless a
// method that is usually quick is slow this once. A busy thread may be handed its next batch
// before it finishes this one (the pool's hand-off ahead): batches run in the order they came.
// Before each task the thread writes the task's place (counted from the batch's `at`) to
// `progress` (shared memory), so that if the thread dies or is abandoned the pool knows which
// tasks ran and which never started.
// Each task's `ctx` is a RequestContext, as on the main thread, on this thread's clock
// (performance.now()): its deadline is the instant the main thread anchored when the request
// arrived (dispatch.js handoffDeadline), not a new anchor here.
import { parentPort, workerData } from 'node:worker_threads'
import { performance } from 'node:perf_hooks'
import { loadHandlerModules, subscriptionMethod, subscriptionOf } from './handler-module.js'
import { packValue } from '../protocol/frames.js'
import { Values } from '../runtime/values.js'
import { isBulkValue } from '../protocol/bulk.js'
import { collectGarbage } from './collect.js'
import { RemoteCode, ZeromeshError } from '../protocol/errors.js'
import { servesStream } from '../runtime/stream-marker.js'
import { StreamProducer, isStream, closeSource } from '../protocol/stream-producer.js'
import { sourceOf } from './streams.js'
import { RequestContext, threadDeadline } from './request-context.js'
import { remoteValue } from '../protocol/issues.js'
import { METHOD } from '../runtime/contract.js'
import { systemClock } from '../runtime/clock.js'
import { StreamConsumer } from '../protocol/stream-consumer.js'
import { unpackr } from '../protocol/msgpack.js'
import { THREAD_INPUT_AHEAD } from './thread-stream.js'

const RESULTS_WAIT_MS = 1 // results finished this long ago leave before the next task starts
const METHOD_MS_WEIGHT = 0.2 // of a new run in a method's time (a moving average)

const { handlers, subscriptions, withMiddleware } = await loadHandlerModules(workerData.modules)
// Subscriptions run here as methods of their own name (subscriptionMethod): the pool hands an
// event to a thread as it hands a request.
for (const sub of subscriptions) handlers[subscriptionMethod(sub.event, sub.group)] = sub.handler
const methods = Object.keys(handlers) // the pool names a method by its place here
const progress = new Int32Array(workerData.progress) // [place of the task running, counted from each hand-off's `at`]
// The contract methods' descriptions (implement()'s), for the main thread's service answer.
const described = {}
for (const m of methods) if (handlers[m][METHOD] !== undefined) described[m] = handlers[m][METHOD]
// The methods it serves as streams (runtime/stream-marker.js), for the same answer.
const streaming = methods.filter((m) => servesStream(handlers[m]))
// The subscriptions every thread runs (eachThread), for the pool to hand each event to all.
const eachThread = subscriptions.filter((sub) => sub.eachThread === true).map((sub) => subscriptionMethod(sub.event, sub.group))
parentPort.postMessage({ type: 'ready', methods, described, streaming, withMiddleware, eachThread })

const methodMs = new Map() //  method -> its measured time per run (ms), moving average
const cancelled = new Set() // ids the client cancelled, of the hand-offs here
const waiting = [] //          hand-offs not begun: the pool may hand the next before this one is done
let draining = false
let running = null //          the ctx of the running task
let runningId = -1

parentPort.on('message', (m) => {
  if (m.type === 'cancel') {
    cancelled.add(m.id)
    if (m.id === runningId) running?.cancel()
  } else if (m.type === 'stream') {
    openStream(m)
  } else if (m.type === 'stream-credit') {
    streams.get(m.sid)?.producer.grant(m.items, m.bytes)
  } else if (m.type === 'stream-input') {
    streams.get(m.sid)?.input?.receive([unpackr.unpack(Buffer.from(m.item))], m.item.byteLength)
  } else if (m.type === 'stream-input-end') {
    streams.get(m.sid)?.input?.end(m.error === null ? null : Object.assign(new Error(m.error[0]), m.error[1] === null ? {} : { code: m.error[1] }))
  } else if (m.type === 'stream-cancel') {
    const s = streams.get(m.sid)
    if (s !== undefined) { streams.delete(m.sid); s.ctx.cancel(); s.producer.cancel() }
  } else if (m.type === 'published') {
    onPublished(m)
  } else if (m.type === 'collect') {
    collectGarbage() // the pool asks only when the peer is idle
  } else {
    waiting.push(m)
    if (!draining) drain()
  }
})

/** Runs the hand-offs in the order they came, one at a time. */
async function drain () {
  draining = true
  while (waiting.length > 0) {
    const m = waiting.shift()
    await runBatch(m.endpoint, m.tasks, m.at)
  }
  draining = false
  cancelled.clear() // every id in it was of a request handed here, all answered now
}

/**
 * Runs a batch of [id, method (its place in `methods`), args, requestId, timeoutMs,
 * deadline (handoffDeadline: 0 for none), trace, headers] in order, counting its places in `progress`
 * from `at`; posts [id, kind, value|message, code] per task: kind 0 ok, 1 error,
 * 2 not run, 3 ok and binary, 4 ok with several results (their array, runtime/values.js). A result is encoded here, as the reply will carry it
 * (MessagePack), so the main thread only copies its bytes into the reply (see post); a large
 * binary one (protocol/bulk.js isBulkValue) goes as its bytes, for the main thread to send in a
 * bulk frame as they come (PROTOCOL.md 4.2.1).
 */
async function runBatch (endpoint, batch, at) {
  const tasks = batch.map(([id, method, args, requestId, timeoutMs, deadline, trace, headers]) => ({
    id, method: typeof method === 'number' ? methods[method] : method, args, requestId, endpoint, timeoutMs, deadline: threadDeadline(deadline), trace, headers,
  }))
  let results = []
  let ranMs = 0 //  time spent running the tasks of `results`
  let oldest = 0 // when the first result in `results` was ready
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]
    let start = performance.now()
    if (results.length > 0 && (start - oldest >= RESULTS_WAIT_MS || !((methodMs.get(task.method) ?? Infinity) < RESULTS_WAIT_MS))) {
      post(results, ranMs)
      results = []
      ranMs = 0
      start = performance.now()
    }
    Atomics.store(progress, 0, at + i)
    const result = await runOne(task)
    const end = performance.now()
    ranMs += end - start
    if (result[1] !== 2) { // not skipped: a run to time
      const ms = methodMs.get(task.method)
      methodMs.set(task.method, ms === undefined ? end - start : ms + METHOD_MS_WEIGHT * (end - start - ms))
    }
    if (results.length === 0) oldest = end
    results.push(result)
  }
  post(results, ranMs)
}

/**
 * Posts results and the time their tasks took here (the pool sizes its hand-offs by it);
 * the values (MessagePack bytes, or a binary result's own) travel in one buffer that is
 * transferred, not copied: each ok result is [id, 0, 3 or 4, offset, length] into it.
 */
function post (results, ranMs) {
  let size = 0
  for (const r of results) if (r[1] === 0 || r[1] === 3 || r[1] === 4) size += r[2].length
  const bytes = new Uint8Array(size)
  let at = 0
  for (const r of results) {
    if (r[1] !== 0 && r[1] !== 3 && r[1] !== 4) continue
    const value = r[2]
    bytes.set(value, at)
    r[2] = at
    r[3] = value.length
    at += value.length
  }
  parentPort.postMessage({ type: 'done', results, ranMs, bytes: bytes.buffer }, [bytes.buffer])
}

async function runOne (task) {
  if (cancelled.has(task.id) || task.deadline <= systemClock.now()) return [task.id, 2, 'deadline passed while queued', RemoteCode.EXPIRED]
  const sub = subscriptionOf(task.method) // [event, group] when it is an event's subscription
  const ctx = new ThreadContext(sub === null ? task.method : sub[0], task.requestId, task.endpoint, task.timeoutMs, task.trace, task.deadline, task.headers)
  if (sub !== null) { ctx.kind = 'event'; ctx.group = sub[1] }
  runningId = task.id
  running = ctx
  try {
    const out = handlers[task.method](task.args, ctx)
    let value = out !== null && typeof out === 'object' && typeof out.then === 'function' ? await out : out
    if (sub !== null) value = null // an event's ack carries no result
    if (isStream(value)) {
      closeSource(value[Symbol.asyncIterator]())
      return [task.id, 1, `method "${task.method}" streams its results: call it with client.stream()`, RemoteCode.STREAM_ONLY]
    }
    if (isBulkValue(value)) return [task.id, 3, value, null]
    try {
      if (value instanceof Values) return [task.id, 4, packValue(value.list), null] // several results (4.2.3)
      return [task.id, 0, packValue(value), null]
    } catch (err) {
      return [task.id, 1, `result could not be encoded: ${err?.message ?? err}`, RemoteCode.ENCODE]
    }
  } catch (err) {
    const [message, code, issues] = remoteValue(err)
    return issues === undefined ? [task.id, 1, message, code] : [task.id, 1, message, code, issues]
  } finally {
    ctx.done()
    runningId = -1
    running = null
  }
}

/** A handler's `ctx` in this thread: the main thread's RequestContext, its trace carried as a value. */
class ThreadContext extends RequestContext {
  constructor (method, requestId, endpoint, timeoutMs, trace, deadline, headers) {
    super({ id: requestId, method, timeoutMs, headers: Object.freeze(headers) }, endpoint, systemClock, 0, deadline)
    this._trace = trace // the SERVER span's context (the main thread's) as its propagator wrote it, or null: docs/guides/observing.md
    this.publisher = threadPublisher
  }

  get trace () {
    return this._trace
  }
}

/**
 * How a handler in this thread publishes: the main thread does it for it (worker-pool.js
 * publishFor), through the peer's own client. An AbortSignal in the options stays here (it
 * cannot be passed on): the publish runs to its deadline.
 */
const published = new Map() // ref -> [resolve, reject] of the publishes this thread asked for
let nextRef = 1
const threadPublisher = {
  publish: (event, payload, options, trace) => askMain('publish', event, payload, options, trace),
  broadcast: (event, payload, options, trace) => askMain('broadcast', event, payload, options, trace),
}

/** `trace`: the handler's span context as the propagator wrote it (ctx.trace), the PRODUCER span's parent. */
function askMain (how, event, payload, options, trace) {
  const ref = nextRef++
  const { signal, ...rest } = options ?? {}
  return new Promise((resolve, reject) => {
    published.set(ref, [resolve, reject])
    parentPort.postMessage({ type: 'publish', how, ref, event, payload, options: rest, trace })
  })
}

/** An error as worker-pool.js publishFor() sends it, made an Error again (a ZeromeshError with its codes). */
function errorOf (e) {
  return Object.assign(new ZeromeshError(e.message, { code: e.code ?? undefined }), { remoteCode: e.remoteCode ?? undefined })
}

function onPublished (m) {
  const p = published.get(m.ref)
  if (p === undefined) return
  published.delete(m.ref)
  if (m.error === undefined) {
    const v = m.value
    return p[0](v.failed === undefined ? v : { ...v, failed: v.failed.map((f) => ({ ...f, error: errorOf(f.error) })) })
  }
  const err = Object.assign(errorOf(m.error), { delivered: m.error.delivered, failed: m.error.failed?.map((f) => ({ ...f, error: errorOf(f.error) })) })
  p[1](err)
}

const streams = new Map() // sid -> { producer, ctx, input } of the streams this thread runs

/**
 * A stream handed to this thread: its handler's items are produced here, under the credit the
 * main thread passes on from the client, on this thread's event loop beside its requests (a
 * stream waiting for credit holds no thread). Item frames are made here and transferred, with
 * copies of their bulk items; the main thread sends them as they are.
 */
function openStream (m) {
  const ctx = new ThreadContext(methods[m.method], m.requestId, m.endpoint, m.timeoutMs, m.trace ?? null, threadDeadline(m.deadline), m.headers)
  ctx.kind = 'stream'
  const end = (err, count) => {
    ctx.done()
    streams.delete(m.sid)
    // `expired`: this thread's own verdict. Threads read their deadline on clocks of their own
    // (performance.now() from each thread's timeOrigin), which differ by a millisecond or more:
    // a handler this thread cut at its deadline could look, to the main thread, a little early.
    parentPort.postMessage({ type: 'stream-end', sid: m.sid, count, error: err === null ? null : remoteValue(err), expired: ctx.expired })
  }
  let input = null
  if (m.input) {
    // ctx.input: the client's items, which the main thread forwards THREAD_INPUT_AHEAD at a
    // time; each one read here asks for the next.
    input = new StreamConsumer({ items: THREAD_INPUT_AHEAD, bytes: Number.MAX_SAFE_INTEGER, grant: (items) => parentPort.postMessage({ type: 'stream-input-read', sid: m.sid, items }) })
    ctx.input = { [Symbol.asyncIterator]: () => ({ next: () => input.next(), return: () => { input.abandon(null); parentPort.postMessage({ type: 'stream-input-stop', sid: m.sid }); return Promise.resolve({ value: undefined, done: true }) } }) }
  }
  let out
  try {
    out = handlers[methods[m.method]](m.args, ctx)
  } catch (err) {
    end(err, 0)
    return
  }
  const producer = new StreamProducer({
    id: m.id,
    source: sourceOf(out),
    items: m.items,
    bytes: m.bytes,
    maxFrame: m.maxFrame,
    maxBatch: m.maxBatch,
    bulk: m.bulk,
    transfer: true,
    send: (frame, bulk, alone) => {
      if (alone) { // a large item's frame, in a buffer of its own: transferred as it is
        parentPort.postMessage({ type: 'stream-item', sid: m.sid, frame: frame.buffer, at: frame.byteOffset }, [frame.buffer])
        return
      }
      const own = new Uint8Array(frame) // a copy of its own, to transfer: `frame` may share a pooled slab
      if (bulk.length === 0) { parentPort.postMessage({ type: 'stream-item', sid: m.sid, frame: own.buffer }, [own.buffer]); return }
      // Bulk items: each copied once, to transfer (the generator may yield the same Buffer again,
      // so it is not detached); the main thread sends these bytes as the bulk frames.
      const bytes = bulk.map((b) => new Uint8Array(b).buffer)
      parentPort.postMessage({ type: 'stream-item', sid: m.sid, frame: own.buffer, bulk: bytes }, [own.buffer, ...bytes])
    },
    end,
  })
  streams.set(m.sid, { producer, ctx, input })
  producer.start()
}
