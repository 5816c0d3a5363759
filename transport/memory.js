// The in-memory twin of the ZeroMQ transports, for whole-system simulations on a virtual
// clock: hosts (one per process) with bound listeners and connecting sockets, joined by
// connections that behave as ZeroMQ over TCP does, with faults injected per host.
//
// - A connection comes up after one network delay when a listener is there, and is tried
//   again every RECONNECT_MS while not; the connector hears onUp, as on a ZMTP handshake.
//   What is sent before it is up waits for it, in order (ZeroMQ with `immediate` off).
// - Messages are never lost on a live connection (TCP retransmits): `loss` on a host's link
//   delays a message instead, by Linux's tail-loss probe (10 ms) for a first loss, then by
//   retransmission timeouts (200 ms, doubling).
// - A partition or a frozen host stalls a connection's messages; they arrive when it heals
//   or thaws, unless the connection went down first. TCP keeps order, so a message late by
//   retransmissions holds back those behind it. A connector with heartbeats runs the ZeroMQ
//   connector's own (transport/heartbeats.js, protocol PINGs): a connection from which nothing
//   came for heartbeatTimeout is taken down (onDown), then dialled again.
// - A listener that closes takes its connections down: after what it sent (a process stopped),
//   or at once (killed).
// - A frozen host runs nothing: its timers and deliveries wait for the thaw (SIGSTOP/SIGCONT).
// Everything runs on the given clock and random source, so a seeded run replays exactly.

import { Heartbeats, HEARTBEAT_PING, heartbeatAnswer } from './heartbeats.js'
import { RECONNECT_MS, RECONNECT_MAX_MS } from './settings.js' // as ZeroMQ's sockets dial again

const TLP_MS = 10 //        Linux's tail-loss probe on a LAN: the first loss of a message costs this...
const RTO_MS = 200 //       ...and each further loss a retransmission timeout, from 200 ms, doubling
const MAX_PIPE = 10000 //   messages a connection holds while stalled (a send high-water mark)

export class MemoryNetwork {
  /**
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => number} o.random
   * @param {number} [o.delay]  one-way delay of every message, ms
   * @param {number} [o.jitter] up to this much more, uniformly at random, per message (ms)
   * @param {number} [o.loss]   of every message on every link, 0..1 (retransmitted, so late)
   */
  constructor (o) {
    this.clock = o.clock
    this.random = o.random
    this.delay = o.delay ?? 0.5
    this.jitter = o.jitter ?? 0
    this.loss = o.loss ?? 0
    this.hosts = new Map() //     name -> Host
    this.listeners = new Map() // endpoint -> MemoryListener
    this.pipes = new Set() //     every connection
    this.cut = new Map() //       host name -> Set of the host names it cannot talk to
    this.nextId = 1
    // What sockets use of the network: the endpoints bound, the connections, and carrying.
    this.wires = {
      delay: this.delay,
      listeners: this.listeners,
      pipes: this.pipes,
      passes: (a, b) => this.passes(a, b),
      carry: (pipe, from, to, deliver) => this.carry(pipe, from, to, deliver),
      newId: () => this.newId(),
    }
  }

  /** A host (a process): its clock, and the transports its Peer or Client takes. */
  host (name) {
    let h = this.hosts.get(name)
    if (h === undefined) {
      h = new Host(name, {
        clock: this.clock,
        wires: this.wires,
        unstall: () => this.unstall(),
        gone: (host) => { if (this.hosts.get(name) === host) this.hosts.delete(name) },
      })
      this.hosts.set(name, h)
    }
    return h
  }

  /** Cuts every link between two groups of hosts (names). */
  partition (a, b) {
    const add = (x, y) => { let set = this.cut.get(x); if (set === undefined) this.cut.set(x, set = new Set()); set.add(y) }
    for (const x of a) for (const y of b) { add(x, y); add(y, x) }
  }

  /** Heals every cut, or only those between two groups of hosts (names) when given. */
  heal (a, b) {
    if (a === undefined) this.cut.clear()
    else for (const x of a) for (const y of b) { this.cut.get(x)?.delete(y); this.cut.get(y)?.delete(x) }
    this.unstall()
  }

  /** Whether a message can go from host `a` to host `b` now. */
  passes (a, b) {
    return !b.frozen && (this.cut.size === 0 || this.cut.get(a.name)?.has(b.name) !== true)
  }

  /** How long one message from `a` to `b` takes: delays, and retransmissions on lossy links. */
  latency (a, b) {
    let ms = this.delay + a.delay + b.delay
    if (this.jitter > 0) ms += this.jitter * this.random()
    const loss = 1 - (1 - this.loss) * (1 - a.loss) * (1 - b.loss)
    if (loss > 0 && this.random() < loss) {
      ms += TLP_MS
      for (let rto = RTO_MS; this.random() < loss && rto < 60000; rto *= 2) ms += rto
    }
    return ms
  }

  /** Sends `deliver` over `pipe` from host `from` to host `to`, in order, with faults. */
  carry (pipe, from, to, deliver) {
    if (!pipe.up) return false
    if (!this.passes(from, to) || pipe.stalled.length > 0) {
      if (pipe.stalled.length >= MAX_PIPE) return false
      pipe.stalled.push([from, to, deliver])
      return true
    }
    const due = Math.max(this.clock.now() + this.latency(from, to), pipe.last) // TCP keeps order
    pipe.last = due
    this.clock.setTimeout(() => { if (pipe.up) to.run(deliver) }, due - this.clock.now())
    return true
  }

  /** Sends on every stalled connection whose path is open again. */
  unstall () {
    for (const pipe of this.pipes) {
      if (pipe.stalled.length === 0) continue
      const [from, to] = pipe.stalled[0]
      if (!this.passes(from, to)) continue
      const list = pipe.stalled
      pipe.stalled = []
      for (const [f, t, deliver] of list) this.carry(pipe, f, t, deliver)
    }
  }

  newId () {
    const id = Buffer.alloc(5) // as libzmq's own routing ids: 0, then a 32-bit number
    id.writeUInt32BE(this.nextId++, 1)
    return id
  }
}

class Host {
  /**
   * @param {string} name
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock  the network's
   * @param {object} o.wires  what its sockets use of the network (MemoryNetwork's wires)
   * @param {() => void} o.unstall  sends what waited for a path (it thawed)
   * @param {(host: Host) => void} o.gone  it was killed: the network forgets it
   */
  constructor (name, { clock: c, wires, unstall, gone }) {
    this.name = name
    this.unstall = unstall
    this.gone = gone
    this.frozen = false
    this.held = [] // what was due while frozen
    this.loss = 0 //  per message on this host's link, each way (retransmitted, so late)
    this.delay = 0 // added one way, each way
    // The host's own clock: its timers wait while it is frozen.
    this.cancelled = new Set() // timers cleared while their call waited for the thaw
    this.clock = {
      now: () => c.now(),
      setTimeout: (fn, ms) => {
        const id = c.setTimeout(() => this.run(fn, id), ms)
        return id
      },
      clearTimeout: (t) => { c.clearTimeout(t); if (this.frozen || this.held.length > 0) this.cancelled.add(t) },
    }
    this.sockets = new Set() // listeners and connectors, for kill()
    // Its sockets are placed here (`at`, which the network reads for faults), on its clock.
    this.listener = (o) => this.own(new MemoryListener({ at: this, wires }, o))
    this.connector = (o) => this.own(new MemoryConnector({ at: this, wires, clock: this.clock, run: (fn) => this.run(fn) }, o))
    this.transport = { listener: this.listener, connector: this.connector }
  }

  own (socket) {
    this.sockets.add(socket)
    return socket
  }

  /**
   * The process is gone without a word (SIGKILL): nothing of it runs again, its listeners'
   * connections drop at once. A process started again on the same name is a new host.
   */
  kill () {
    this.frozen = true
    this.held = []
    for (const s of this.sockets) s.close(true)
    this.gone(this)
  }

  /** Runs `fn` on this host, now, or at the thaw when frozen. */
  run (fn, timer) {
    if (this.frozen) this.held.push([fn, timer])
    else fn()
  }

  freeze () {
    this.frozen = true
  }

  thaw () {
    this.frozen = false
    const held = this.held
    for (let i = 0; i < held.length; i++) {
      const [fn, timer] = held[i]
      if (timer === undefined || !this.cancelled.delete(timer)) fn()
    }
    this.held = []
    this.cancelled.clear()
    this.unstall()
  }
}

/**
 * One connection, from a connector to a listener, carrying both ways. Each end is what the
 * other end uses of it: where it is (`at`), `receive(pipe, frames)`, and for the connector's
 * end `lost(pipe)`, for the listener's its `pipes`.
 */
class Pipe {
  constructor (connector, endpoint, id) {
    this.connector = connector
    this.endpoint = endpoint
    this.listener = null
    this.id = id
    this.up = false
    this.stalled = [] // [from, to, deliver] waiting for a path
    this.waiting = [] // frames sent before the connection came up
    this.last = 0 //    when the last message sent on it arrives
  }
}

export class MemoryListener {
  /**
   * @param {{ at: object, wires: object }} place  its host, and what it uses of the network
   * @param {object} o  the listener's options, as the ZeroMQ listener takes them
   */
  constructor ({ at, wires }, o) {
    this.wires = wires
    this.o = o
    this.endpoint = null
    this.pipes = new Map() // connection id (latin1) -> Pipe
    this.end = { at, pipes: this.pipes, receive: (pipe, frames) => this.receive(pipe, frames) } // what a connection uses of it
  }

  async bind () {
    const endpoint = this.o.advertise ?? this.o.bind
    if (this.wires.listeners.has(endpoint)) throw Object.assign(new Error(`${endpoint} is in use`), { code: 'EADDRINUSE' })
    this.endpoint = endpoint
    this.wires.listeners.set(endpoint, this.end)
    return endpoint
  }

  get open () {
    return this.endpoint !== null
  }

  /**
   * A reply to the connection `clientId`; dropped (and counted) when it is gone. With `done`,
   * nothing is counted: done(code) once, asynchronously (null, EHOSTUNREACH or EAGAIN), as
   * the ZeroMQ listener does.
   */
  send (clientId, frames, done) {
    const pipe = this.pipes.get(clientId.toString('latin1'))
    let code = null
    if (pipe === undefined || !pipe.up) code = 'EHOSTUNREACH'
    else if (!this.wires.carry(pipe, this.end.at, pipe.connector.at, () => pipe.connector.receive(pipe, frames))) code = 'EAGAIN'
    if (done !== undefined) queueMicrotask(() => done(code))
    else if (code !== null) this.o.onDrop?.(code === 'EAGAIN' ? 'client-not-reading' : 'client-gone')
  }

  receive (pipe, frames) {
    if (this.endpoint !== null) this.o.onMessage(pipe.id, frames)
  }

  /**
   * Stops listening. What it sent before arrives first, then its connections end (TCP's FIN
   * behind the data: a stopping peer's last replies reach their clients); `abrupt` (a kill)
   * takes them down at once.
   */
  async close (abrupt = false) {
    if (this.endpoint === null) return
    this.wires.listeners.delete(this.endpoint)
    this.endpoint = null
    for (const pipe of this.pipes.values()) {
      const end = () => pipe.connector.lost(pipe)
      if (abrupt || !this.wires.carry(pipe, this.end.at, pipe.connector.at, end)) end()
    }
    this.pipes.clear()
  }
}

export class MemoryConnector {
  /**
   * @param {object} place
   * @param {object} place.at  its host (the network reads it for faults)
   * @param {object} place.wires  what it uses of the network
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} place.clock  its host's clock
   * @param {(fn: () => void) => void} place.run  runs on its host (now, or at the thaw)
   * @param {object} o  the connector's options, as the ZeroMQ connector takes them
   */
  constructor ({ at, wires, clock, run }, o) {
    this.at = at
    this.wires = wires
    this.clock = clock
    this.run = run
    this.o = o
    this.end = { at, receive: (pipe, frames) => this.receive(pipe, frames), lost: (pipe) => this.lost(pipe) } // what a connection uses of it
    this.pipes = new Map() // endpoint -> Pipe
    this.closed = false
    this.heartbeats = o.heartbeatInterval > 0
      ? new Heartbeats({
        interval: o.heartbeatInterval,
        timeout: o.heartbeatTimeout,
        clock,
        ping: (ep) => this.send(ep, [HEARTBEAT_PING]),
        silent: (ep) => { const pipe = this.pipes.get(ep); if (pipe !== undefined) this.lost(pipe) },
      })
      : null
  }

  connect (endpoint) {
    if (this.closed) return false
    if (!this.pipes.has(endpoint)) {
      const pipe = new Pipe(this.end, endpoint, this.wires.newId())
      this.pipes.set(endpoint, pipe)
      this.dial(endpoint, pipe, this.wires.delay)
    }
    return true
  }

  /** Tries to reach the listener at `endpoint` in `ms`; again after RECONNECT_MS, doubling to RECONNECT_MAX_MS, until it does (as ZeroMQ). */
  dial (endpoint, pipe, ms) {
    this.clock.setTimeout(() => this.attempt(endpoint, pipe), ms)
  }

  /** One attempt to connect `pipe`: up (onUp) when the listener is there and reachable, else tried again. */
  attempt (endpoint, pipe) {
    if (this.closed || this.pipes.get(endpoint) !== pipe || pipe.up) return
    const l = this.wires.listeners.get(endpoint)
    const w = this.wires
    if (l === undefined || !w.passes(this.at, l.at) || !w.passes(l.at, this.at)) {
      pipe.retryMs = Math.min(RECONNECT_MAX_MS, (pipe.retryMs ?? RECONNECT_MS / 2) * 2)
      this.dial(endpoint, pipe, pipe.retryMs)
      return
    }
    pipe.listener = l
    pipe.up = true
    pipe.last = 0
    l.pipes.set(pipe.id.toString('latin1'), pipe)
    w.pipes.add(pipe)
    const waiting = pipe.waiting
    pipe.waiting = []
    for (const frames of waiting) w.carry(pipe, this.at, l.at, () => l.receive(pipe, frames))
    this.heartbeats?.up(endpoint)
    this.o.onUp?.(endpoint)
  }

  /**
   * Tries the connection to `endpoint` now rather than at its next retry: when the listener is
   * there and reachable it is up (onUp) before this returns. For tests that script when a
   * connection comes up.
   */
  dialNow (endpoint) {
    const pipe = this.pipes.get(endpoint)
    if (pipe !== undefined) this.attempt(endpoint, pipe)
  }

  /** The connection to `endpoint` breaks now, as on a reset: onDown, and it is dialled again. */
  drop (endpoint) {
    const pipe = this.pipes.get(endpoint)
    if (pipe !== undefined) this.lost(pipe)
  }

  /** The connection went down: onDown, its stalled messages are lost, and it is dialled again. */
  lost (pipe) {
    if (!pipe.up) return
    pipe.up = false
    pipe.stalled = []
    this.wires.pipes.delete(pipe)
    pipe.listener?.pipes.delete(pipe.id.toString('latin1'))
    const endpoint = pipe.endpoint
    if (this.closed || this.pipes.get(endpoint) !== pipe) return
    this.heartbeats?.down(endpoint)
    // A new connection, as ZeroMQ makes on reconnect (the listener sees a new id).
    const next = new Pipe(this.end, endpoint, this.wires.newId())
    this.pipes.set(endpoint, next)
    this.run(() => this.o.onDown?.(endpoint))
    this.dial(endpoint, next, RECONNECT_MS)
  }

  disconnect (endpoint) {
    const pipe = this.pipes.get(endpoint)
    if (pipe === undefined) return
    this.heartbeats?.down(endpoint)
    this.pipes.delete(endpoint)
    pipe.up = false
    pipe.stalled = []
    pipe.waiting = []
    this.wires.pipes.delete(pipe)
    pipe.listener?.pipes.delete(pipe.id.toString('latin1'))
  }

  /**
   * Sends; `done(code)` once, asynchronously: null, EHOSTUNREACH when never connected (or
   * disconnected), EAGAIN when the connection holds MAX_PIPE messages. A connection not up yet
   * keeps what is sent until it is.
   */
  send (endpoint, frames, done) {
    const pipe = this.pipes.get(endpoint)
    let code = null
    if (this.closed) code = 'CLOSED'
    else if (pipe === undefined) code = 'EHOSTUNREACH'
    else if (!pipe.up) {
      if (pipe.waiting.length >= MAX_PIPE) code = 'EAGAIN'
      else pipe.waiting.push(frames)
    } else if (!this.wires.carry(pipe, this.at, pipe.listener.at, () => pipe.listener.receive(pipe, frames))) code = 'EAGAIN'
    queueMicrotask(() => done?.(code))
  }

  receive (pipe, frames) {
    if (this.closed || !pipe.up) return
    if (this.heartbeats !== null) {
      this.heartbeats.heard(pipe.endpoint)
      const beat = frames.length === 1 ? heartbeatAnswer(frames[0]) : null
      if (beat !== null) return this.o.onHeartbeat?.(pipe.endpoint, beat)
    }
    this.o.onMessage(pipe.endpoint, frames)
  }

  async close () {
    this.closed = true
    this.heartbeats?.stop()
    for (const endpoint of [...this.pipes.keys()]) this.disconnect(endpoint)
  }
}
