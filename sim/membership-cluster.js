// A cluster of Membership instances for tests and for bench/cluster/gossip-sim.js: each member a host
// on the in-memory transport (transport/memory.js) with the peer's own gossip transport, codec
// and answering, on a virtual clock. Nodes are added, killed (silently gone), frozen (cut off,
// then back), and asked what they think of each other. Gossip rides connections that behave
// as ZeroMQ over TCP does: a lost message is retransmitted (late), never gone, and a
// partition stalls messages until it heals.
import { Membership } from '../peer/membership/swim.js'
import { resolveMembershipOptions } from '../peer/membership/config.js'
import { GossipTransport, answerGossip } from '../peer/gossip-transport.js'
import { MemoryNetwork } from '../transport/memory.js'
import { decode } from '../protocol/codec.js'
import { Limits } from '../protocol/constants.js'
import { VirtualClock } from '../testing/virtual-clock.js'
import { seededRandom } from '../testing/random.js'

/** The simulation's wall clock at its time 0 (ms since 1970): fixed, so runs replay exactly. */
export const SIM_EPOCH = 1.7e12

export class SimCluster {
  /**
   * @param {object} [o]
   * @param {number} [o.loss]   of every message on every link, 0..1 (retransmitted: late, as TCP)
   * @param {number} [o.delay]  one-way delay, ms
   * @param {number} [o.seed]   of the random source (the same seed replays the same run)
   * @param {object} [o.config] membership options (peer/membership/config.js)
   */
  constructor ({ loss = 0, delay = 1, seed = 1, config = {} } = {}) {
    this.clock = new VirtualClock(0)
    this.random = seededRandom(seed)
    this.net = new MemoryNetwork({ clock: this.clock, random: this.random, loss, delay })
    this.config = resolveMembershipOptions(config)
    this.nodes = new Map()
    this.lives = new Map() // endpoint -> times started, for incarnations of restarted nodes
    this.traffic = new Map() // endpoint -> { sent, bytes }: gossip frames each node sent, requests and answers
    this.bytesByType = {} //    message type -> bytes of every node's frames of that type
  }

  /**
   * Starts `endpoints` as a cluster that has already converged: every node starts knowing
   * every other as alive (no join traffic), as after a long quiet period.
   */
  addConverged (endpoints) {
    const nodes = endpoints.map((ep) => this.add(ep, []))
    const claims = nodes.map((other) => other.claimOf(other.table.self))
    for (const m of nodes) {
      nodes.forEach((other, i) => { if (other !== m) m.absorb([claims[i]], other.endpoint, true) })
      m.queue.clear() // nothing left to gossip about
    }
    return nodes
  }

  /** Starts a node that joins through `seeds`. */
  add (endpoint, seeds = []) {
    const life = (this.lives.get(endpoint) ?? 0) + 1
    this.lives.set(endpoint, life)
    const host = this.net.host(endpoint)
    const traffic = { sent: 0, bytes: 0 }
    this.traffic.set(endpoint, traffic)
    const count = (frame, msg) => {
      traffic.sent++
      traffic.bytes += frame.length
      this.bytesByType[msg.type] = (this.bytesByType[msg.type] ?? 0) + frame.length
    }
    const gossip = new GossipTransport({
      connector: host.connector,
      clock: host.clock,
      limits: Limits,
      heartbeatInterval: 0,
      heartbeatTimeout: 0,
      onDisconnect: (ep) => m.probeNow(ep),
      onLate: (ep, answer) => m.late(ep, answer),
      maxConnections: this.config.maxConnections,
      idleMs: this.config.connectionIdleMs,
    })
    const frameOf = gossip.frameOf.bind(gossip)
    gossip.frameOf = (seq, msg) => { const frame = frameOf(seq, msg); count(frame, msg); return frame }
    const listener = host.listener({
      bind: endpoint,
      onMessage: (clientId, frames) => {
        let msg
        try { msg = decode(frames[0]) } catch { return }
        if (msg.gossip !== undefined) answerGossip(m, msg, (frame, answer) => { count(frame, answer); listener.send(clientId, [frame]) }, () => {})
      },
    })
    listener.bind()
    const m = new Membership({
      endpoint,
      incarnation: life * 1000,
      seeds,
      net: gossip,
      clock: host.clock,
      random: this.random,
      config: this.config,
      wallClock: () => SIM_EPOCH + this.clock.now(),
    })
    m.host = host
    this.nodes.set(endpoint, m)
    m.start()
    return m
  }

  /** Gone without a word (SIGKILL). */
  kill (endpoint) {
    const m = this.nodes.get(endpoint)
    m.stop()
    m.host.kill()
    this.nodes.delete(endpoint)
  }

  /** Cut off from everyone, still running (SIGSTOP-like as others see it). */
  isolate (endpoint) {
    this.net.partition([endpoint], [...this.nodes.keys()].filter((e) => e !== endpoint))
  }

  /** The state `observer` holds for `endpoint` ('alive', 'suspect', 'dead', 'left' or undefined). */
  view (observer, endpoint) {
    return this.nodes.get(observer).members().find((m) => m.endpoint === endpoint)?.state
  }

  /** Whether every running node other than `endpoint` sees it in one of `states`. */
  allSee (endpoint, states) {
    for (const [ep, m] of this.nodes) {
      if (ep === endpoint) continue
      const s = m.members().find((x) => x.endpoint === endpoint)?.state
      if (!states.includes(s)) return false
    }
    return true
  }

  /** Advances fake time by `ms`, letting every promise chain run between timers. */
  async run (ms) {
    await this.clock.advance(ms)
  }

  /** Advances in `step` ms steps until `cond()` holds; returns the time it took, or -1. */
  async until (cond, { max = 60000, step = 10 } = {}) {
    const t0 = this.clock.now()
    while (this.clock.now() - t0 <= max) {
      if (cond()) return this.clock.now() - t0
      await this.clock.advance(step)
    }
    return -1
  }

  stop () {
    for (const m of this.nodes.values()) m.stop()
  }
}
