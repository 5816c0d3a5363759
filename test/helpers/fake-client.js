// A Client on the fake transport (helpers/fake-transport.js) and a fake clock, for logic
// tests: no sockets, no sleeping. Peers A, B and C; round robin; discovery off.
import FakeTimers from '@sinonjs/fake-timers'
import { Client } from '../../index.js'
import { FakeNetwork } from './fake-transport.js'

export const A = 'tcp://127.0.0.1:1001'
export const B = 'tcp://127.0.0.1:1002'
export const C = 'tcp://127.0.0.1:1003'

export function setup (options = {}, peers = [A, B, C]) {
  const fake = FakeTimers.createClock(0)
  const clock = {
    now: () => fake.now,
    setTimeout: (f, ms) => fake.setTimeout(f, ms),
    clearTimeout: (t) => fake.clearTimeout(t),
    tick: (ms) => fake.tick(ms),
  }
  const net = new FakeNetwork(clock)
  for (const ep of peers) net.define(ep)
  const client = new Client({ seeds: peers, clock, transport: net.clientTransport(), strategy: 'round-robin', discover: false, ...options })
  return { clock, net, client }
}

/** Settles a promise into { value } or { code }, so a test can tick the clock first. */
export function track (promise) {
  const out = { done: false }
  promise.then((value) => Object.assign(out, { done: true, value }), (err) => Object.assign(out, { done: true, code: err.code, err }))
  return out
}

export const flush = () => new Promise((resolve) => setImmediate(resolve))

/** Moves the fake clock `ms` forward, 1 ms at a time, letting the event loop turn at each. */
export async function tick (clock, ms) {
  for (let i = 0; i < ms; i++) { clock.tick(1); await flush() }
}
