// A Client on scripted peers (helpers/fake-transport.js: the in-memory transport) and a
// virtual clock, for logic tests: no sockets, no sleeping. Peers A, B and C; round robin;
// discovery off.
import { Client } from '../../index.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { FakeNetwork } from './fake-transport.js'

export const A = 'tcp://127.0.0.1:1001'
export const B = 'tcp://127.0.0.1:1002'
export const C = 'tcp://127.0.0.1:1003'

export function setup (options = {}, peers = [A, B, C]) {
  const clock = new VirtualClock(0)
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

/** Moves the virtual clock `ms` forward, 1 ms at a time, letting the event loop turn at each. */
export async function tick (clock, ms) {
  for (let i = 0; i < ms; i++) await clock.advance(1)
}
