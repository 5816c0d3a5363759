// The worlds a behaviour suite runs in, as zeromq.js runs its tests over several transports:
// the same peers and clients, their transport a parameter.
//   memory  the in-memory network (transport/memory.js) on a virtual clock: no ports, no
//           sleeping; time moves only as the test waits, so a 5 s deadline costs no 5 s.
//           Hosts can be killed (SIGKILL), frozen and partitioned.
//   zeromq  real ZeroMQ sockets on 127.0.0.1, ephemeral ports, real time: the conformance of
//           the real transport with what the memory world shows.
// A world gives: peer(options) (started), client(options), settle(promise) (its value, or
// throws its error, within `ms` of the world's time), until(fn) (a condition, within `ms`),
// now() (the world's time, ms), after(ms, value) (a promise of `value` `ms` later in the
// world's time: a handler's work), kill(peer) (memory only: `canKill`), and cleanup().
import { Peer, Client } from '../../index.js'
import { stopAtOnce } from './insides.js'
import { MemoryNetwork } from '../../transport/memory.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { seededRandom } from '../../testing/random.js'
import { eventually } from './eventually.js'
import { harness } from './cluster.js'

const STEP_MS = 5 // the memory world's clock moves this much at a time while a test waits

function memoryWorld () {
  const clock = new VirtualClock()
  const net = new MemoryNetwork({ clock, random: seededRandom(7), delay: 1 })
  const peers = []
  const clients = []
  const hosts = new Map() // Peer -> its host
  let nextPort = 7200
  let nextHost = 0
  // Handlers in worker threads do real work in real time: with one in the world the clock
  // keeps to real time's pace (a step waits its 5 ms), or a deadline would pass in virtual time
  // before a thread's answer could come (a pool takes ~100 ms to start).
  let paced = false
  /** Moves the clock a step and lets real I/O callbacks (setImmediate: the outboxes) run. */
  const step = async () => {
    await clock.advance(STEP_MS)
    await new Promise((resolve) => paced ? setTimeout(resolve, STEP_MS) : setImmediate(resolve))
  }
  return {
    name: 'memory network, virtual clock',
    canKill: true,
    clock,
    async peer (options = {}) {
      const host = net.host(`peer-${nextHost++}`)
      if (options.handlers instanceof URL || typeof options.handlers === 'string') paced ||= options.threads !== 0 // a module: threads unless told 0
      const p = new Peer({ bind: `tcp://127.0.0.1:${nextPort++}`, clock: host.clock, transport: host.transport, random: seededRandom(nextPort), ...options })
      hosts.set(p, host)
      peers.push(p)
      await this.settle(p.start())
      return p
    },
    client (options = {}) {
      const host = net.host(`client-${nextHost++}`)
      const c = new Client({ clock: host.clock, transport: host.transport, random: seededRandom(nextHost), ...options })
      clients.push(c)
      return c
    },
    now: () => clock.now(),
    after: (ms, value) => new Promise((resolve) => clock.setTimeout(() => resolve(value), ms)),
    async settle (promise, ms = 60000) {
      let out = null
      promise.then((value) => { out = { value } }, (error) => { out = { error } })
      for (let waited = 0; out === null; waited += STEP_MS) {
        if (waited > ms) throw new Error(`not settled within ${ms} ms of virtual time`)
        await step()
      }
      if ('error' in out) throw out.error
      return out.value
    },
    async until (fn, ms = 10000) {
      for (let waited = 0; ; waited += STEP_MS) {
        try {
          return await fn()
        } catch (err) {
          if (waited > ms) throw err
          await step()
        }
      }
    },
    /** A new host's clock and transport, for parts the world does not make itself (a ZeromeshServer's peer, a ZeromeshClient's client). */
    place () {
      const host = net.host(`part-${nextHost++}`)
      return { clock: host.clock, transport: host.transport }
    },
    /** Moves the world's time `ms` forward. */
    async pass (ms) {
      for (let t = 0; t < ms; t += STEP_MS) await step()
    },
    kill (peer) {
      hosts.get(peer).kill()
      peers.splice(peers.indexOf(peer), 1)
    },
    async cleanup () {
      const closing = clients.splice(0).map((c) => c.close())
      const stopping = peers.splice(0).map(stopAtOnce)
      await this.settle(Promise.all([...closing, ...stopping]))
    },
  }
}

function zeromqWorld () {
  const h = harness() // in-process peers and clients on 127.0.0.1, closed at cleanup (cluster.js)
  return {
    name: 'ZeroMQ on 127.0.0.1',
    canKill: false,
    peer: (options) => h.peer(options),
    client: (options) => h.client(options),
    settle (promise) {
      return promise
    },
    until (fn, ms = 10000) {
      return eventually(fn, { timeout: ms })
    },
    now: () => performance.now(),
    after: (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value)),
    pass (ms) {
      return new Promise((resolve) => setTimeout(resolve, ms))
    },
    kill () {
      throw new Error('the ZeroMQ world does not kill in-process peers: test/process kills real ones')
    },
    cleanup: () => h.cleanup(),
  }
}

/** Each world, made anew by make() for each test. */
export const WORLDS = [
  { name: 'memory network, virtual clock', make: memoryWorld, canKill: true },
  { name: 'ZeroMQ on 127.0.0.1', make: zeromqWorld, canKill: false },
]

/** `promise`'s error, settled in world `w` (throws when it resolves). */
export async function failure (w, promise) {
  try {
    await w.settle(promise)
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection, but it resolved')
}
