// The whole system in one process: real Peers and Clients (their membership, dispatch,
// balancing and failover code, the real codec) on the in-memory network (transport/memory.js)
// and a virtual clock, deterministic from a seed. Faults are injected per host; the load is
// idempotent requests from every client; what each client got from each peer is counted
// per 250 ms, so a test can ask when every live peer was back in every client's rotation.
import { Peer, Client } from '../index.js'
import { insideOf } from '../peer/peer.js'
import { MemoryNetwork } from '../transport/memory.js'
import { VirtualClock } from '../testing/virtual-clock.js'
import { seededRandom } from '../testing/random.js'
import { SIM_EPOCH } from './membership-cluster.js'

const BUCKET_MS = 250

export class SystemSim {
  /**
   * @param {object} [o]
   * @param {number} [o.seed]
   * @param {number} [o.peers]       how many peers
   * @param {number} [o.clients]     how many clients
   * @param {number} [o.inflight]    requests each client keeps in flight
   * @param {number} [o.think]       pause between one client loop's requests, ms
   * @param {object} [o.membership]  peers' membership options
   * @param {object} [o.client]      clients' options
   * @param {number} [o.delay]       one-way network delay, ms (0.25)
   * @param {number} [o.jitter]      up to this much more per message, uniformly at random, ms (0)
   * @param {(endpoint: string, i: number, clock: object) => object} [o.peerOptions]  more Peer options per peer (labels, handlers, capacity)
   * @param {(i: number) => object} [o.clientOptions]  more Client options per client (zone)
   * @param {string} [o.method]      what the clients call; a handler returns [endpoint, ...] ('echo')
   */
  constructor (o = {}) {
    this.o = { seed: 1, peers: 5, clients: 2, inflight: 8, think: 10, delay: 0.25, jitter: 0, method: 'echo', peerOptions: () => ({}), clientOptions: () => ({}), ...o }
    this.clock = new VirtualClock(0)
    this.random = seededRandom(this.o.seed)
    this.net = new MemoryNetwork({ clock: this.clock, random: this.random, delay: this.o.delay, jitter: this.o.jitter })
    this.endpoints = Array.from({ length: this.o.peers }, (_, i) => `tcp://127.0.0.1:${7001 + i}`)
    this.peers = new Map() //   endpoint -> Peer (the running one)
    this.lives = new Map() //   endpoint -> how many times started (host names)
    this.clients = []
    this.hostOf = new Map() //  endpoint -> Host of the running peer
    this.faulty = new Set() //  endpoints whose host is under a fault now: not "healthy"
    this.deaths = [] //         [time, observer, endpoint] a healthy peer declared a healthy member dead
    this.counts = { ok: 0, failed: 0, errors: {} }
    this.served = [] //         per client: Map(endpoint -> Map(bucket -> count))
    this.loops = []
    this.stopped = false
  }

  async start () {
    for (const ep of this.endpoints) await this.startPeer(ep)
    await this.run(3000) // the cluster converges
    for (let i = 0; i < this.o.clients; i++) this.startClient(i)
    await this.run(1000)
  }

  async startPeer (endpoint) {
    const life = (this.lives.get(endpoint) ?? 0) + 1
    this.lives.set(endpoint, life)
    const host = this.net.host(`${endpoint}#${life}`)
    const peer = new Peer({
      bind: endpoint,
      seeds: this.endpoints.filter((e) => e !== endpoint).slice(0, 2),
      clock: host.clock,
      wallClock: () => SIM_EPOCH + this.clock.now(),
      random: this.random,
      transport: host.transport,
      membership: this.o.membership,
      handlers: { echo: (args) => [endpoint, args] },
      drainTimeout: 1000,
      stopLinger: 0,
      ...this.o.peerOptions(endpoint, this.endpoints.indexOf(endpoint), host.clock),
    })
    peer.on('member', (m) => {
      if (m.state === 'dead' && this.peers.has(m.endpoint) && !this.faulty.has(m.endpoint) && !this.faulty.has(endpoint)) {
        this.deaths.push([this.clock.now(), endpoint, m.endpoint])
      }
    })
    const started = peer.start()
    await this.run(10)
    await started
    this.peers.set(endpoint, peer)
    this.hostOf.set(endpoint, host)
    return peer
  }

  startClient (i) {
    const host = this.net.host(`client-${i}`)
    const client = new Client({
      seeds: this.endpoints.slice(0, 2),
      clock: host.clock,
      random: this.random,
      transport: host.transport,
      ...this.o.client,
      ...this.o.clientOptions(i),
    })
    const served = new Map()
    this.served.push(served)
    this.clients.push(client)
    for (let k = 0; k < this.o.inflight; k++) this.loops.push(this.loop(client, served, host.clock))
  }

  async loop (client, served, clock) {
    let n = 0
    while (!this.stopped) {
      try {
        const [ep] = await client.request(this.o.method, n++, { timeout: 3000, idempotent: true })
        this.counts.ok++
        let byBucket = served.get(ep)
        if (byBucket === undefined) served.set(ep, byBucket = new Map())
        const b = Math.floor(this.clock.now() / BUCKET_MS)
        byBucket.set(b, (byBucket.get(b) ?? 0) + 1)
      } catch (err) {
        if (this.stopped && err.code === 'ERR_ZEROMESH_CLOSED') return
        this.counts.failed++
        this.counts.errors[err.code] = (this.counts.errors[err.code] ?? 0) + 1
      }
      await new Promise((resolve) => clock.setTimeout(resolve, this.o.think))
    }
  }

  /** From now on each client loop pauses `ms` between its requests (a lighter load while a test only waits). */
  pace (ms) {
    this.o.think = ms
  }

  /** The peer at `endpoint` dies (SIGKILL): its host leaves the network, its sockets close. */
  kill (endpoint) {
    this.faulty.add(endpoint)
    this.hostOf.get(endpoint).kill()
    this.peers.delete(endpoint)
  }

  run (ms) {
    return this.clock.advance(ms)
  }

  host (endpoint) {
    return this.hostOf.get(endpoint)
  }

  /** The share of client `c`'s answers from `endpoint` over [from, to). */
  share (c, endpoint, from, to) {
    let mine = 0; let all = 0
    for (const [ep, byBucket] of this.served[c]) {
      for (let b = Math.floor(from / BUCKET_MS); b < Math.floor(to / BUCKET_MS); b++) {
        const n = byBucket.get(b) ?? 0
        all += n
        if (ep === endpoint) mine += n
      }
    }
    return all === 0 ? 0 : mine / all
  }

  /**
   * Runs on until every live peer has at least half its fair share of every client's answers
   * over a 1 s window; returns the ms from now to that window's end, or -1 after `max` ms.
   */
  async untilFullRotation (max = 15000) {
    const t0 = this.clock.now()
    const live = () => [...this.peers.keys()]
    for (;;) {
      await this.run(BUCKET_MS)
      const now = this.clock.now()
      if (now - t0 >= 1000) {
        const fair = 1 / live().length
        let full = true
        for (let c = 0; c < this.clients.length && full; c++) {
          for (const ep of live()) if (this.share(c, ep, now - 1000, now) < fair / 2) { full = false; break }
        }
        if (full) return now - t0
      }
      if (now - t0 > max) return -1
    }
  }

  /** Answers client `c` got from each peer so far: Map(endpoint -> count). */
  totals (c) {
    const out = new Map()
    for (const [ep, byBucket] of this.served[c]) {
      let n = 0
      for (const v of byBucket.values()) n += v
      out.set(ep, n)
    }
    return out
  }

  /**
   * Runs until client `c` has had `n` more answers than now (in steps of `step` ms); returns
   * how many each peer gave of those.
   */
  async next (c, n, step = 1) {
    const before = this.totals(c)
    const got = () => { const t = this.totals(c); const out = new Map(); for (const [ep, v] of t) out.set(ep, v - (before.get(ep) ?? 0)); return out }
    for (let i = 0; i < 1e6; i++) {
      const m = got()
      if ([...m.values()].reduce((a, b) => a + b, 0) >= n) return m
      await this.run(step)
    }
    throw new Error(`client ${c} did not get ${n} answers`)
  }

  /** Each peer's own view: whether every running peer sees every other as alive. */
  converged () {
    for (const p of this.peers.values()) {
      const alive = new Set(p.members().filter((m) => m.state === 'alive').map((m) => m.endpoint))
      for (const ep of this.peers.keys()) if (!alive.has(ep)) return false
    }
    return true
  }

  /** Member-list fetches by all clients so far. */
  fetches () {
    return this.clients.reduce((n, c) => n + c.stats().memberFetches, 0)
  }

  async stop () {
    this.stopped = true
    await Promise.all(this.clients.map((c) => c.close()))
    const stopping = [...this.peers.values()].map((p) => { insideOf(p).options.drainTimeout = 0; return p.stop() })
    await this.run(2000)
    await Promise.all(stopping)
    await this.run(100)
    await Promise.all(this.loops)
  }
}
