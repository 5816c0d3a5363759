// A cluster of Membership instances on a MemoryNetwork and a fake clock, for tests and for
// bench/gossip-sim.js. Nodes are added, killed (silently gone), frozen (cut off, then back),
// and asked what they think of each other.
import { Membership } from '../peer/membership/swim.js'
import { resolveMembershipOptions } from '../peer/membership/config.js'
import { MemoryNetwork } from './membership-network.js'
import { VirtualClock } from '../testing/virtual-clock.js'
import { seededRandom } from '../testing/random.js'

/** The simulation's wall clock at its time 0 (ms since 1970): fixed, so runs replay exactly. */
export const SIM_EPOCH = 1.7e12


export class SimCluster {
  constructor ({ loss = 0, delay = 1, seed = 1, config = {}, sizeOf } = {}) {
    this.clock = new VirtualClock(0)
    this.random = seededRandom(seed)
    this.net = new MemoryNetwork({ clock: this.clock, random: this.random, loss, delay, sizeOf })
    this.config = resolveMembershipOptions(config)
    this.nodes = new Map()
    this.lives = new Map() // endpoint -> times started, for incarnations of restarted nodes
  }

  /**
   * Starts `endpoints` as a cluster that has already converged: every node starts knowing
   * every other as alive (no join traffic), as after a long quiet period.
   */
  addConverged (endpoints) {
    const nodes = endpoints.map((ep) => this.add(ep, []))
    for (const m of nodes) {
      for (const other of nodes) {
        if (other !== m) m.absorb([other.claimOf(other.table.self)], other.endpoint, true)
      }
      m.queue.items.clear() // nothing left to gossip about
    }
    return nodes
  }

  /** Starts a node that joins through `seeds`. */
  add (endpoint, seeds = []) {
    const life = (this.lives.get(endpoint) ?? 0) + 1
    this.lives.set(endpoint, life)
    let m = null
    const link = this.net.attach(endpoint, (msg) => m.handle(msg))
    m = new Membership({
      endpoint,
      incarnation: life * 1000,
      seeds,
      net: link,
      clock: this.clock,
      random: this.random,
      config: this.config,
      wallClock: () => SIM_EPOCH + this.clock.now(),
    })
    m.link = link
    this.nodes.set(endpoint, m)
    m.start()
    return m
  }

  /** Gone without a word (SIGKILL). */
  kill (endpoint) {
    const m = this.nodes.get(endpoint)
    m.stop()
    m.link.close()
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
