// The instrumented window of bench/request-path/wakeups.js: what a process's JS thread makes
// and calls per request, counted between start() and stop(). An async_hooks init hook counts
// what is made by type (PROMISE, Timeout, Immediate, TickObject, ...); wrappers count calls of
// setTimeout, clearTimeout, setImmediate, clearImmediate, queueMicrotask and process.nextTick.
// The wrappers go in when this module loads, before the code measured is imported (a global
// such as setTimeout is looked up at each call, so zeromesh's clock calls the wrapper).
// Loaded with `node --import` into a server, SIGUSR2 starts the window and the next SIGUSR2
// stops it and writes the counts as JSON to $ZEROMESH_WAKEUPS_FILE.
import { createHook } from 'node:async_hooks'
import { writeFileSync, renameSync } from 'node:fs'

let counting = false
const calls = {}
const made = {}
for (const [owner, name] of [[globalThis, 'setTimeout'], [globalThis, 'clearTimeout'], [globalThis, 'setImmediate'], [globalThis, 'clearImmediate'], [globalThis, 'queueMicrotask'], [process, 'nextTick']]) {
  const real = owner[name]
  owner[name] = function (...args) {
    if (counting) calls[name] = (calls[name] ?? 0) + 1
    return real.apply(this, args)
  }
}
const hook = createHook({ init (id, type) { made[type] = (made[type] ?? 0) + 1 } })

export function start () {
  for (const k of Object.keys(calls)) delete calls[k]
  for (const k of Object.keys(made)) delete made[k]
  hook.enable()
  counting = true
}

export function stop () {
  counting = false
  hook.disable()
  return { calls: { ...calls }, made: { ...made } }
}

const file = process.env.ZEROMESH_WAKEUPS_FILE
if (file) {
  let on = false
  process.on('SIGUSR2', () => {
    on = !on
    if (on) start()
    else { writeFileSync(`${file}.part`, JSON.stringify(stop())); renameSync(`${file}.part`, file) } // whole when it appears
  })
}
