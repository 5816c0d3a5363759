// A peer on a virtual clock over real ZeroMQ sockets: its timers (a drain's quiet window, a
// count's window) move only when the test moves them, so a test waits no real time for them;
// its sockets still take real time, so what it awaits is moved along until it settles.
import { eventually } from './eventually.js'

/** `promise`'s value, the virtual `clock` moved along in real time until it settles (within 10 s). */
export async function onClock (clock, promise, { step = 5, timeout = 10000 } = {}) {
  let out = null
  promise.then((value) => { out = { value } }, (error) => { out = { error } })
  await eventually(async () => {
    if (out === null) await clock.advance(step)
    if (out === null) throw new Error(`not settled within ${timeout} ms, the clock moved along`)
  }, { timeout, interval: 5 })
  if ('error' in out) throw out.error
  return out.value
}
