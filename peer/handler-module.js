// The methods of a handler module: its exported functions and the functions of its
// default-export object; its subscriptions: its `events` export ({ event: handler }, { event:
// { handler, group } }, or on()'s) and those an implement() default export carries; and its
// `middleware` export, an array the peer runs on its main thread. Shared by `zeromesh peer
// --handlers` and the worker threads.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { invalidArgument } from '../protocol/errors.js'
import { middlewareOf } from '../runtime/middleware.js'
import { SUBSCRIPTIONS } from '../runtime/contract.js'
import { subscriptionsOf } from './subscriptions.js'

/**
 * The name a subscription runs under among a worker thread's methods (worker-pool.js hands
 * work to a thread by method): a NUL, the event, a NUL, the group. A method name the API
 * takes never starts with a NUL (runtime/options.js checkMethod).
 */
export function subscriptionMethod (event, group) {
  return `\0${event}\0${group}`
}

/** The [event, group] of a subscriptionMethod() name, or null for a method's name. */
export function subscriptionOf (name) {
  if (name.charCodeAt(0) !== 0) return null
  const at = name.indexOf('\0', 1)
  return [name.slice(1, at), name.slice(at + 1)]
}

/**
 * The methods of several handler modules (URLs), loaded in order, as one object, and the URLs
 * of those that export `middleware`. A method two modules export is refused, naming both. A
 * module that fails to load throws its error with `moduleUrl` set to it, for loadFailure.
 */
export async function loadHandlerModules (urls) {
  const handlers = {}
  const subscriptions = []
  const withMiddleware = []
  const from = {}
  for (const url of urls) {
    let mod
    try {
      mod = await import(url)
    } catch (err) {
      if (err !== null && typeof err === 'object') err.moduleUrl = url
      throw err
    }
    for (const [name, fn] of Object.entries(collectHandlers(mod))) {
      if (from[name] !== undefined) throw Object.assign(new Error(`method "${name}" is exported by both ${from[name]} and ${url}: give each method one module`), { moduleUrl: url, duplicate: true })
      from[name] = url
      handlers[name] = fn
    }
    subscriptions.push(...collectSubscriptions(mod, url))
    if (mod.middleware !== undefined) withMiddleware.push(url)
  }
  return { handlers, subscriptions, withMiddleware }
}

/** A module's subscriptions: its `events` export, and those its implement() default export carries. */
export function collectSubscriptions (mod, url) {
  const carried = Array.isArray(mod.default?.[SUBSCRIPTIONS]) ? mod.default[SUBSCRIPTIONS] : []
  return [...carried, ...subscriptionsOf(mod.events, `handlers module ${url}: its events export`)]
}

/**
 * The `middleware` of handler modules (URLs), in module order, loaded on this (the main)
 * thread: an array of functions each, or an InvalidArgumentError naming the module.
 */
export async function loadModuleMiddleware (urls) {
  const out = []
  for (const url of urls) {
    const mod = await import(url)
    if (!Array.isArray(mod.middleware)) throw invalidArgument(`handlers module ${url}: its middleware export must be an array of functions async (ctx, next) => ...`)
    mod.middleware.forEach((fn, i) => out.push(middlewareOf(fn, `handlers module ${url}, middleware[${i}]`)))
  }
  return out
}

export function collectHandlers (mod) {
  const handlers = {}
  if (mod.default !== null && typeof mod.default === 'object') {
    for (const [name, f] of Object.entries(mod.default)) if (typeof f === 'function') handlers[name] = f
  }
  for (const [name, f] of Object.entries(mod)) if (typeof f === 'function' && name !== 'default' && name !== 'events') handlers[name] = f
  return handlers
}

/**
 * Why a handler module did not load, with where. A syntax error's message names no file or
 * line (Node prints them only for an uncaught one), so `node --check` is asked for them; any
 * other error is placed by the first frame of its stack in a file.
 */
export function loadFailure (err, moduleUrl) {
  // The module itself is not there: say so, with its path, not Node's message (which names
  // the zeromesh file that imported it).
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && typeof moduleUrl === 'string' && moduleUrl.startsWith('file:') && String(err.message).includes(`'${fileURLToPath(moduleUrl)}'`)) {
    return `no such file: ${fileURLToPath(moduleUrl)} (a relative path is taken from the working directory, ${process.cwd()})`
  }
  const message = `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}`
  if (err?.name === 'SyntaxError' && typeof moduleUrl === 'string' && moduleUrl.startsWith('file:')) {
    try {
      execFileSync(process.execPath, ['--check', fileURLToPath(moduleUrl)], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10000 })
    } catch (checked) {
      const [where, source] = String(checked.stderr ?? '').split('\n')
      if (/:\d+$/.test(where ?? '')) return `${message} at ${where}${source?.trim() ? ` (${source.trim().slice(0, 80)})` : ''}`
    }
    return message
  }
  const frame = /\((file:\/\/[^)]+:\d+:\d+)\)|at (file:\/\/\S+:\d+:\d+)/.exec(String(err?.stack ?? ''))
  if (frame === null) return message
  const at = frame[1] ?? frame[2]
  return `${message} at ${fileURLToPath(at.replace(/:\d+:\d+$/, ''))}${at.match(/:\d+:\d+$/)[0]}`
}
