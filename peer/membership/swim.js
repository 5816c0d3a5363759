// SWIM membership for one peer: joins through seeds with a push-pull exchange, probes one
// member per interval (directly, then through k others), suspects and declares dead with
// Lifeguard suspicion, spreads changes on probe traffic, syncs full state now and then,
// refutes suspicions of itself and announces its leave. Once the cluster is larger than
// 2 x `monitors`, a peer probes only its subjects on the monitoring overlay (overlay.js) and
// syncs with one of them, so its probes, syncs and the connections it holds for them do not
// grow with the cluster. Every claim from the network passes
// admission (admission.js) first; members heard of second-hand are candidates until they
// answer a probe (candidates.js); dead and left members are reaped. Written against an
// injected network, clock and random source, so it runs on ZeroMQ and on an in-memory
// network alike.
//
// The network: `net.request(endpoint, msg, timeoutMs)` resolves with the answer from that
// endpoint, or null (timeout, unreachable); `net.forget?(endpoint)` drops a connection no
// longer needed; `net.keep?(endpoints)` names the connections to keep (the subjects), and
// `net.connected?()` the endpoints connected now; incoming requests are handed to `handle(msg)`.
import { EventEmitter } from 'node:events'
import { MemberTable, State, stateNames, claimBytes } from './member-table.js'
import { Suspicion, suspicionBounds } from './suspicion.js'
import { BroadcastQueue } from './broadcast-queue.js'
import { admit, Action } from './admission.js'
import { Candidates } from './candidates.js'
import { ReconnectList } from './reconnect-list.js'
import { Awareness } from './awareness.js'
import { Overlay } from './overlay.js'
import { RoundTrips } from './round-trips.js'
import { incarnationHorizon } from '../../protocol/claims.js'

const DEAD_SYNC_CHANCE = 0.25 // share of push-pulls sent to a member held dead
const STALL_ROUNDS = 3 //       no probe round for this many intervals: the process was stalled
const DEAD_PROBE_ROUNDS = 4 //  a member held dead is probed every this many probe rounds (1 s by default)
const MAX_VERIFYING = 8 //       candidates probed at once
const MAX_RECONNECT = 256 //     reaped dead members still tried by push-pull, at most
const LAST_CALL = 2 //           members asked whether they heard a refutation before a suspicion ends in a death

export class Membership extends EventEmitter {
  /**
   * @param {object} o
   * @param {string} o.endpoint       this peer
   * @param {number} o.incarnation    starting incarnation: higher than any earlier life of this endpoint
   * @param {object} [o.meta]         carried in gossip (version, capacity, tags)
   * @param {number|null} [o.service] the digest of what this peer serves (protocol/service.js), null for none
   * @param {string[]} o.seeds
   * @param {{ request(endpoint: string, msg: object, timeoutMs: number): Promise<object|null> }} o.net
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => number} o.random
   * @param {ReturnType<typeof import('./config.js').resolveMembershipOptions>} o.config
   * @param {() => number} [o.wallClock]  ms since 1970, for the incarnation horizon (Date.now)
   * @param {number} [o.listBudget]       bytes the claims of a full list may take (a frame's room)
   * @param {(endpoint: string) => boolean} [o.accept]  members this peer may hold (a plain peer: loopback only); a claim about another is refused
   * @param {(fields: object, message: string) => void} [o.debug]  what it does, for an operator at --log-level debug (none: not a word)
   */
  constructor (o) {
    super()
    this.o = o
    this.c = o.config
    this.endpoint = o.endpoint
    this.wallClock = o.wallClock ?? Date.now
    this.listBudget = o.listBudget ?? Infinity
    this.table = new MemberTable({ endpoint: o.endpoint, incarnation: o.incarnation, meta: o.meta ?? {}, service: o.service ?? null })
    this.candidates = new Candidates({ max: this.c.maxCandidates, ttl: this.c.candidateTimeout })
    this.reconnect = new ReconnectList({ max: MAX_RECONNECT, ttl: this.c.reconnectTimeout })
    this.queue = new BroadcastQueue({ retransmitMult: this.c.retransmitMult })
    this.suspicions = new Map() // endpoint -> Suspicion
    this.seeds = o.seeds.filter((s) => s !== o.endpoint)
    this.order = [] //   probe order: a shuffled list, consumed round robin
    this.rounds = 0 //   probe rounds so far
    this.lastRound = 0 // when the last one ran
    this.awareness = new Awareness(this.c.awarenessMax)
    this.roundTrips = new RoundTrips()
    this.overlay = new Overlay({ self: o.endpoint, rings: this.c.monitors, fullMeshBelow: 2 * this.c.monitors + 1 })
    this.kept = null //  the subjects last handed to net.keep
    this.syncTokens = 2 * this.c.maxSyncsPerSecond // push-pull answers in store (a token bucket)
    this.syncTokensAt = 0
    this.skip = 0 //     probe rounds still to sit out: with poor local health, probes are spaced out
    this.probing = new Set() // endpoints with a probe in progress
    this.timers = new Set()
    this.running = false
    this.joined = this.seeds.length === 0
    this.joining = false
    this.joinFailures = 0 // join attempts in a row that reached no seed
    this.joinPause = this.c.joinRetryMin
    this.version = this.table.digest()
    this.counts = {
      probes: 0, gossips: 0, indirect: 0, lateRounds: 0, suspected: 0, suspectedOwn: 0, died: 0, refuted: 0, stalls: 0, syncs: 0, joinAttempts: 0,
      candidates: 0, verified: 0, candidatesDropped: 0, candidatesExpired: 0, reaped: 0, listTrimmed: 0, syncsRefused: 0, leftRelayed: 0,
      refused: { beyondHorizon: 0, probeTarget: 0, offLoopback: 0 },
    }
  }

  // ---- life cycle --------------------------------------------------------------------

  start () {
    this.running = true
    this.lastRound = this.o.clock.now()
    this.syncTokensAt = this.lastRound
    this.queue.enqueue(this.claimOf(this.table.self))
    if (!this.joined) this.join()
    this.every(this.c.probeInterval, () => this.probeRound(), this.jitter(this.c.probeInterval))
    if (this.c.gossipInterval > 0 && this.c.gossipNodes > 0) this.every(this.c.gossipInterval, () => this.gossipRound(), this.jitter(this.c.gossipInterval))
    if (this.c.pushPullInterval > 0) this.schedulePushPull(this.jitter(this.c.pushPullInterval))
  }

  /**
   * Push-pull carries the whole member list, so in large clusters it runs less often (as in
   * memberlist): the interval is multiplied by ceil(log2(N) - log2(32)) + 1 above 32 members.
   */
  schedulePushPull (first) {
    this.after(first, () => {
      this.pushPull()
      this.schedulePushPull(this.c.pushPullInterval * pushPullScale(this.table.map.size))
    })
  }

  /**
   * Announces the leave directly to the members this peer talks to (every live member in a
   * small cluster; its subjects, observers and the members it holds connections to in a large
   * one: the others hear of it by gossip, as a death), bounded by leaveTimeout, then stops.
   */
  async leave () {
    if (!this.running) return
    const self = this.table.self
    this.table.leave()
    this.version = this.table.digest()
    this.emitMember(self)
    const claim = this.claimOf(self)
    this.queue.enqueue(claim, true)
    const targets = this.leaveTargets()
    await Promise.all(targets.map((m) => this.o.net.request(m.endpoint, {
      type: 'probe', from: this.endpoint, target: m.endpoint, updates: [claim],
    }, this.c.leaveTimeout)))
    this.stop()
    this.left = true // until the socket closes, it answers that it left (handle)
  }

  leaveTargets () {
    const live = this.table.live()
    if (this.overlay.full) return live
    const near = new Set([...this.overlay.subjects(), ...this.overlay.observers(), ...(this.o.net.connected?.() ?? [])])
    return live.filter((m) => near.has(m.endpoint))
  }

  stop () {
    this.running = false
    this.joining = false
    for (const t of this.timers) this.o.clock.clearTimeout(t)
    this.timers.clear()
    for (const s of this.suspicions.values()) s.cancel()
    this.suspicions.clear()
  }

  every (ms, fn, first = ms) {
    const run = () => {
      this.timers.delete(timer)
      if (!this.running) return
      timer = this.o.clock.setTimeout(run, ms)
      this.timers.add(timer)
      fn()
    }
    let timer = this.o.clock.setTimeout(run, first)
    this.timers.add(timer)
  }

  after (ms, fn) {
    const timer = this.o.clock.setTimeout(() => { this.timers.delete(timer); if (this.running) fn() }, ms)
    this.timers.add(timer)
  }

  jitter (ms) {
    return Math.floor(this.o.random() * ms)
  }

  // ---- joining and anti-entropy ------------------------------------------------------

  /**
   * The seeds changed (DNS seeds resolved again). A peer alone joins through them; one in a
   * cluster syncs once with each new seed it does not hold as a member, so two groups that
   * started apart (each seeing only itself in DNS at first) become one.
   */
  setSeeds (seeds) {
    const before = new Set(this.seeds)
    this.seeds = [...new Set(seeds)].filter((s) => s !== this.endpoint)
    if (!this.running) { this.joined = this.seeds.length === 0; return }
    const alone = this.table.live().filter((m) => m.endpoint !== this.endpoint).length === 0
    if (alone && this.seeds.length > 0) { this.joined = false; this.join(); return }
    for (const s of this.seeds) if (!before.has(s) && this.table.get(s) === undefined) this.sync(s)
  }

  /** Tries the seeds until one answers; only one such attempt chain runs at a time. */
  join () {
    if (this.joining || this.joined || !this.running) return
    this.joining = true
    this.joinAttempt()
  }

  async joinAttempt () {
    if (!this.running) { this.joining = false; return }
    this.counts.joinAttempts++
    const results = await Promise.all(this.seeds.map((s) => this.sync(s)))
    if (results.some(Boolean)) {
      this.joined = true
      this.joining = false
      this.joinPause = this.c.joinRetryMin
      this.joinFailures = 0
      this.o.debug?.({ members: this.table.live().length + 1 }, `push-pull with the seeds done: ${this.table.live().length + 1} members known`)
      this.emit('joined', { through: this.seeds.filter((_, i) => results[i]) })
      return
    }
    // No seed answered: keep serving, try again later (exponential backoff with jitter).
    const pause = this.joinPause
    this.joinPause = Math.min(this.c.joinRetryMax, this.joinPause * 2)
    const retryIn = Math.round(pause / 2 + this.jitter(pause / 2))
    this.joinFailures++
    this.emit('join-failed', { seeds: this.seeds, attempts: this.joinFailures, retryIn })
    this.after(retryIn, () => this.joinAttempt())
  }

  /**
   * A push-pull with `endpoint`: this peer's whole list (a join, a new seed, a member held
   * dead), or with `sample`, periodic anti-entropy with a live member, a random sample of
   * pushPullClaims; the answer is of the same kind (see handle).
   */
  async sync (endpoint, sample = false) {
    const members = sample ? this.sample(this.c.pushPullClaims) : this.fullState()
    const reply = await this.o.net.request(endpoint, { type: 'sync', from: this.endpoint, members }, this.c.syncTimeout)
    if (reply?.type !== 'sync') return false
    this.counts.syncs++
    this.absorb(reply.members, endpoint, true)
    return true
  }

  /** Members held dead, and those reaped while dead within reconnectTimeout (reconnect-list.js). */
  deadEndpoints () {
    const dead = this.table.all().filter((m) => m.state === State.DEAD).map((m) => m.endpoint)
    dead.push(...this.reconnect.endpoints(this.o.clock.now()))
    return dead
  }

  pushPull () {
    // Now and then sync with a member held dead: if it is in fact alive (a healed partition,
    // a long freeze) it learns what we think, refutes, and both sides converge. Left members
    // said goodbye and are never contacted again.
    // Members reaped while dead are tried too, for reconnectTimeout (reconnect-list.js).
    const dead = this.deadEndpoints()
    if (dead.length > 0 && this.o.random() < DEAD_SYNC_CHANCE) return this.sync(dead[Math.floor(this.o.random() * dead.length)])
    // A random subject: in a large cluster, on a connection held anyway (overlay.js).
    const live = this.probeable().filter((m) => m.state === State.ALIVE)
    if (live.length > 0) return this.sync(live[Math.floor(this.o.random() * live.length)].endpoint, true)
    // Everyone we knew is gone: fall back to the seeds.
    if (this.seeds.length > 0) { this.joined = false; return this.join() }
  }

  /**
   * Claims about every member, this peer first, as a sync or a member list carries them:
   * within `budget` bytes (a frame's room), whatever the cluster size. When they do not all
   * fit, live members go before dead and left ones, each group in a random order, so
   * successive lists carry different members.
   */
  fullState (budget = this.listBudget) {
    const all = this.table.all()
    let total = 0
    for (const m of all) total += claimBytes(m)
    if (total <= budget) return all.map((m) => this.claimOf(m))
    const self = this.table.self
    const live = []; const gone = []
    for (const m of all) if (m !== self) (m.state <= State.SUSPECT ? live : gone).push(m)
    const out = [this.claimOf(self)]
    let bytes = claimBytes(self)
    for (const m of [...this.shuffle(live), ...this.shuffle(gone)]) {
      const b = claimBytes(m)
      if (bytes + b > budget) continue
      bytes += b
      out.push(this.claimOf(m))
    }
    this.counts.listTrimmed++
    return out
  }

  /**
   * This peer's claim and `n` others at random, for periodic anti-entropy: what one misses
   * of gossip is repaired within a few exchanges, and a push-pull costs the same bytes at 30
   * members or 1,000 (the whole list made push-pull most of the bytes at 1,000). Within the
   * frame's room too.
   */
  sample (n) {
    const all = this.table.all()
    const self = this.table.self
    if (all.length <= n + 1) return this.fullState()
    const out = [this.claimOf(self)]
    let bytes = claimBytes(self)
    for (let i = 0, picked = 0; i < all.length && picked < n; i++) {
      const j = i + Math.floor(this.o.random() * (all.length - i))
      const m = all[j]; all[j] = all[i]; all[i] = m
      if (m === self) continue
      const b = claimBytes(m)
      if (bytes + b > this.listBudget) break
      bytes += b
      picked++
      out.push(this.claimOf(m))
    }
    return out
  }

  /**
   * This peer serves something else now (Peer.serve, unserve): its claim carries the new
   * digest at a higher incarnation, so it wins over the old one everywhere and the member-list
   * digest changes, which makes clients fetch the list and ask this peer what it serves.
   */
  setService (digest) {
    if (digest === this.table.self.service) return
    const claim = this.table.setService(digest)
    if (!this.running) { this.version = this.table.digest(); return }
    this.queue.enqueue(this.claimOf(claim))
    this.changed(this.table.self)
  }

  // ---- failure detection -------------------------------------------------------------

  nextTarget () {
    for (let tries = 0; tries < 2; tries++) {
      while (this.order.length > 0) {
        const m = this.table.get(this.order.pop())
        if (m !== undefined && m.state <= State.SUSPECT && !this.probing.has(m.endpoint)) return m
      }
      // A new cycle over the subjects as they are now: taken once a cycle, not at every
      // change, so a peer learning a cluster of hundreds does not dial every member it
      // briefly held as a subject (the successors on a ring shrink as members are learned).
      this.keepSubjects()
      this.order = this.shuffle(this.probeable().map((m) => m.endpoint))
    }
    return undefined
  }

  /** The live members this peer probes: every one in a small cluster, its subjects in a large one. */
  probeable () {
    if (this.overlay.full) return this.table.live()
    const out = []
    for (const ep of this.overlay.subjects()) {
      const m = this.table.get(ep)
      if (m !== undefined && m.state <= State.SUSPECT) out.push(m)
    }
    return out
  }

  /** The network is told which connections to keep: the subjects, when they changed. */
  keepSubjects () {
    const subjects = this.overlay.subjects()
    if (subjects === this.kept) return
    this.kept = subjects
    this.o.net.keep?.(subjects)
  }

  probeRound () {
    const now = this.o.clock.now()
    if (now - this.lastRound > STALL_ROUNDS * this.c.probeInterval) this.stalled()
    else if (now - this.lastRound - this.c.probeInterval > this.c.probeTimeout / 2) this.slow()
    this.lastRound = now
    if (this.skip > 0) {
      this.skip--
    } else {
      // Lifeguard: the probe interval is scaled by local health, one round in (score + 1).
      this.skip = this.awareness.score
      const target = this.nextTarget()
      if (target !== undefined) this.probe(target)
    }
    if (++this.rounds % DEAD_PROBE_ROUNDS === 0) this.probeTheDead()
    this.tidy()
  }

  /**
   * While urgent changes wait in the queue (a suspicion, a refutation, a death, a leave; plain
   * news of a member alive rides on probes only), they are pushed to gossipNodes random subjects (members
   * this peer holds connections to) besides riding on probes, as memberlist's gossip does: on
   * probes alone a change spreads one hop a probe interval, and at hundreds of members a
   * refutation could lose the race with the suspicion it answers (seen at 120 members on 2
   * cores: a member refuted 1.5 s before others' suspicions of it ran out). A PROBE carries
   * them, so the receiver answers with its own (vouched). Nothing is sent while none is urgent.
   */
  gossipRound () {
    if (this.queue.urgent === 0) return
    // Subjects connected already: a gossip never costs a handshake (a network that cannot
    // say what is connected gets any alive subject).
    let pool = this.probeable().filter((m) => m.state === State.ALIVE)
    if (this.o.net.connected !== undefined) {
      const connected = new Set(this.o.net.connected())
      pool = pool.filter((m) => connected.has(m.endpoint))
    }
    const targets = this.shuffle(pool).slice(0, this.c.gossipNodes)
    for (const t of targets) {
      const msg = this.message('probe', t.endpoint)
      if (msg.updates.length === 0) return
      this.counts.gossips++
      this.o.net.request(t.endpoint, msg, this.c.probeTimeout).then((ack) => {
        if (this.running && ack?.type === 'ack') this.absorb(ack.updates, t.endpoint, true)
      })
    }
  }

  /**
   * This round's timer fired more than half a probe timeout late: this process is short of
   * CPU (a host running more than it can, a long GC), so the silences its probes meet say as
   * much about itself as about others. Its local health worsens (Lifeguard), so it probes
   * less often, waits longer and keeps suspicions longer, until its probes are answered
   * again. In the lab's cold start of 120 peers on 2 cores this, with suspicionMult 6, took
   * false deaths from 3-6 a run to 0 in 4 runs out of 4 (bench/RESULTS.md, "The lab").
   */
  slow () {
    this.counts.lateRounds++
    this.awareness.apply(1)
  }

  /**
   * This process was stalled (SIGSTOP, a long GC pause): the suspicions it holds ran on while
   * it could not hear refutations, so each starts over, and its local health is worse.
   */
  stalled () {
    this.counts.stalls++
    this.o.debug?.({ suspicions: this.suspicions.size }, `no probe round for ${STALL_ROUNDS} intervals (this process was stalled): ${this.suspicions.size} suspicion${this.suspicions.size === 1 ? '' : 's'} start over`)
    this.awareness.apply(1)
    for (const [ep, s] of [...this.suspicions]) {
      s.cancel()
      const m = this.table.get(ep)
      if (m?.state === State.SUSPECT) this.startSuspicion(ep, m.by ?? this.endpoint)
      else this.suspicions.delete(ep)
    }
  }

  /**
   * Every DEAD_PROBE_ROUNDS rounds one member held dead (or reaped while dead, for
   * reconnectTimeout) is probed; one that answers is alive after all (a healed partition, a
   * thawed process): a sync with it tells it what we think, it refutes, and both sides
   * converge within a few rounds of the heal. One small message a round at most, and none
   * while nobody is dead. (memberlist gossips to the dead for 30 s; Serf reconnects.)
   */
  async probeTheDead () {
    const dead = this.deadEndpoints()
    if (dead.length === 0) return
    const ep = dead[Math.floor(this.o.random() * dead.length)]
    const ack = await this.o.net.request(ep, { type: 'probe', from: this.endpoint, target: ep, updates: [] }, this.c.probeTimeout * 2)
    if (this.running && ack?.type === 'ack') await this.sync(ep)
  }

  /** Once per probe round: expired candidates and long-dead members are forgotten. */
  tidy () {
    for (const ep of this.candidates.expire(this.o.clock.now())) {
      this.counts.candidatesExpired++
      this.o.debug?.({ candidate: ep }, `candidate ${ep} never answered a probe: forgotten`)
      if (this.table.get(ep) === undefined) this.o.net.forget?.(ep)
    }
    for (const m of this.table.reap(this.o.clock.now(), this.c.reapAfter)) {
      this.counts.reaped++
      if (m.state === State.DEAD) this.reconnect.add(m.endpoint, this.o.clock.now())
    }
    this.verify()
  }

  // ---- candidates --------------------------------------------------------------------

  /** Probes candidates not being probed yet, up to MAX_VERIFYING at once. */
  verify () {
    if (!this.running) return
    const room = MAX_VERIFYING - this.candidates.verifying
    if (room > 0) for (const c of this.candidates.startVerifying(room)) this.verifyOne(c.claim.endpoint)
  }

  /** A candidate that answers is admitted, alive, at the incarnation it was heard of with. */
  async verifyOne (ep) {
    const ack = await this.o.net.request(ep, { type: 'probe', from: this.endpoint, target: ep, updates: [] }, this.c.probeTimeout * 2)
    if (!this.running) return
    if (ack?.type !== 'ack') { this.candidates.unanswered(ep); return }
    const claim = this.candidates.take(ep)
    if (claim !== undefined) {
      this.counts.verified++
      this.o.debug?.({ candidate: ep }, `candidate ${ep} answered a probe: admitted`)
      this.absorb([{ ...claim, state: State.ALIVE }], ep, true)
    }
    this.absorb(ack.updates, ep, true)
  }

  /**
   * An answer from `endpoint` that came after its request timed out: its claims still count
   * (vouched: it came from the member asked, on our connection to it).
   */
  late (endpoint, answer) {
    if (!this.running) return
    if (answer?.type === 'sync') this.absorb(answer.members, endpoint, true)
    else this.absorb(answer?.updates, endpoint, true)
  }

  /** Probes now, out of turn: used when the connection to a member drops. */
  probeNow (endpoint) {
    const m = this.table.get(endpoint)
    if (this.running && m !== undefined && m !== this.table.self && m.state <= State.SUSPECT && !this.probing.has(endpoint)) this.probe(m)
  }

  async probe (target) {
    const ep = target.endpoint
    const incarnation = target.incarnation
    this.probing.add(ep)
    this.counts.probes++
    try {
      const msg = this.message('probe', ep)
      // Buddy system (Lifeguard): a member probed while we hold it suspect hears about it in
      // the probe itself, so it can refute at once instead of waiting for gossip to reach it.
      if (target.state === State.SUSPECT && !msg.updates.some((u) => u.endpoint === ep)) msg.updates.push(this.claimOf(target))
      const timeout = this.awareness.scale(this.c.probeTimeout)
      const sentAt = this.o.clock.now()
      const ack = await this.o.net.request(ep, msg, timeout)
      if (ack?.type === 'ack') { this.roundTrips.add(this.o.clock.now() - sentAt); this.awareness.apply(-1); this.absorb(ack.updates, ep, true); return }
      if (!this.running) return
      const helpers = this.helpersFor(ep)
      this.counts.indirect += helpers.length
      this.o.debug?.({ member: ep, timeoutMs: timeout, helpers: helpers.map((h) => h.endpoint) }, `no ack from ${ep} within ${timeout} ms: asking ${helpers.length} other member${helpers.length === 1 ? '' : 's'} to probe it, and it again`)
      // Asked of others, and once more directly at the same time (memberlist does this second
      // attempt over TCP): a single lost message must not be enough to suspect a member.
      const retry = { ...msg, updates: msg.updates.filter((u) => u.endpoint === ep) }
      const asked = [...helpers.map((h) => h.endpoint), ep]
      const replies = await Promise.all([
        ...helpers.map((h) => this.o.net.request(h.endpoint, this.message('probe-req', ep), timeout * 2)),
        this.o.net.request(ep, retry, timeout * 2),
      ])
      let reached = false
      let nacks = 0
      for (let i = 0; i < replies.length; i++) {
        const r = replies[i]
        if (r === null) continue
        this.absorb(r.updates, asked[i], true)
        if (r.type === 'ack') reached = true
        else if (r.type === 'nack' && i < helpers.length) nacks++
      }
      if (!this.running) return
      if (reached) { this.awareness.apply(-1); return }
      // Helpers that did not even answer NACK say our own messages are not getting through.
      this.awareness.apply(helpers.length > 0 ? helpers.length - nacks : 1)
      this.suspect(ep, incarnation)
    } finally {
      this.probing.delete(ep)
    }
  }

  /**
   * Up to indirectChecks alive members to probe `ep` for this peer, at random: in a large
   * cluster among those it holds connections to (its subjects first), so that a failed probe
   * costs no new connection here, and only then among the rest.
   */
  helpersFor (ep) {
    const ok = (m) => m !== undefined && m.endpoint !== ep && m.state === State.ALIVE
    if (this.overlay.full) return this.shuffle(this.table.live().filter(ok)).slice(0, this.c.indirectChecks)
    const near = new Set([...this.overlay.subjects(), ...(this.o.net.connected?.() ?? [])])
    const out = this.shuffle([...near].map((e) => this.table.get(e)).filter(ok)).slice(0, this.c.indirectChecks)
    if (out.length < this.c.indirectChecks) {
      const rest = this.shuffle(this.table.live().filter((m) => ok(m) && !near.has(m.endpoint)))
      out.push(...rest.slice(0, this.c.indirectChecks - out.length))
    }
    return out
  }

  message (type, target) {
    const n = this.table.map.size
    return { type, from: this.endpoint, target, updates: this.queue.take(n, this.c.maxPiggyback) }
  }

  /** This peer's own conclusion: its probes of a member got no answer. */
  suspect (endpoint, incarnation) {
    const m = this.table.get(endpoint)
    if (m === undefined || m.incarnation !== incarnation) return
    if (m.state === State.ALIVE) {
      this.counts.suspectedOwn++
      this.o.debug?.({ member: endpoint, incarnation }, `probes of ${endpoint} went unanswered, directly and through others: suspect`)
      this.put({ endpoint, incarnation, state: State.SUSPECT, meta: m.meta, by: this.endpoint })
    } else if (m.state === State.SUSPECT && this.suspicions.get(endpoint)?.confirm(this.endpoint)) {
      // Suspected already on someone's word; our own failed probe is an independent
      // confirmation, and is passed on as ours (as memberlist does).
      this.queue.enqueue({ ...this.claimOf(m), by: this.endpoint }, true)
    }
  }

  startSuspicion (endpoint, by) {
    const n = this.table.live().length + 1
    const bounds = suspicionBounds(n, this.c.probeInterval, this.c.suspicionMult, this.c.suspicionMaxMult)
    const min = this.awareness.scale(bounds.min) // Lifeguard: a peer in poor health waits longer
    const max = this.awareness.scale(bounds.max)
    // Confirmations expected (as memberlist): suspicionMult - 2, so the nominal timeout is hit
    // two probe intervals early; none when there are not that many other members to confirm.
    const want = Math.max(0, this.c.suspicionMult - 2)
    const k = n - 2 < want ? 0 : want
    this.suspicions.get(endpoint)?.cancel()
    this.suspicions.set(endpoint, new Suspicion({
      from: by, k, min, max, clock: this.o.clock,
      onExpire: () => {
        this.suspicions.delete(endpoint)
        const m = this.table.get(endpoint)
        if (!this.running || m === undefined || m.state !== State.SUSPECT) return
        // No probe round for a while: this process was stalled (SIGSTOP, a long GC pause) and
        // the suspicion ran out while it could not hear refutations. It starts over instead.
        if (this.o.clock.now() - this.lastRound > STALL_ROUNDS * this.c.probeInterval) {
          this.stalled()
          this.startSuspicion(endpoint, m.by ?? this.endpoint)
          return
        }
        if (m.leaving) { // a leave heard second-hand, never refuted: it left
          this.counts.leftRelayed++
          this.put({ endpoint, incarnation: m.incarnation, state: State.LEFT, meta: m.meta })
          return
        }
        this.lastCall(m)
      },
    }))
  }

  /**
   * A suspicion of `m` ran out. Before it ends in a death, the suspicion rides in a probe to
   * LAST_CALL members this peer is connected to (never the suspect: no connection is made): one
   * that holds the member's refutation answers with it (correct), and the member lives. Seen
   * after a healed partition, where a refutation made at once reached one peer 3 s late, in a
   * rush of claims, after its own sends of the suspicion had gone to peers that had not heard
   * the refutation yet. One probe round trip later than before, the death.
   */
  async lastCall (m) {
    const { endpoint, incarnation } = m
    let pool = this.probeable().filter((x) => x.state === State.ALIVE && x.endpoint !== endpoint)
    if (this.o.net.connected !== undefined) {
      const connected = new Set(this.o.net.connected())
      pool = pool.filter((x) => connected.has(x.endpoint))
    }
    if (pool.length > 0) { // else nobody to ask: dead at once
      const claim = this.claimOf(m)
      const timeout = this.awareness.scale(this.c.probeTimeout)
      await Promise.all(this.shuffle(pool).slice(0, LAST_CALL).map(async (x) => {
        const ack = await this.o.net.request(x.endpoint, { type: 'probe', from: this.endpoint, target: x.endpoint, updates: [claim] }, timeout)
        if (this.running && ack?.type === 'ack') this.absorb(ack.updates, x.endpoint, true)
      }))
    }
    const now = this.table.get(endpoint)
    if (!this.running || now === undefined || now.state !== State.SUSPECT || now.incarnation !== incarnation || this.suspicions.has(endpoint)) return // refuted, or suspected anew, meanwhile
    this.counts.died++
    this.o.debug?.({ member: endpoint, incarnation, by: now.by }, `suspicion of ${endpoint} (raised by ${now.by ?? this.endpoint}) ran out without a refutation: dead`)
    this.put({ endpoint, incarnation, state: State.DEAD, meta: now.meta })
  }

  // ---- applying claims ---------------------------------------------------------------

  /**
   * Takes in claims from the network. `author` is who they came from: the member that
   * answered this peer (`vouched`), or the `from` of a request, which anyone could have
   * written. Each claim passes admission (admission.js); what changes the table is passed on.
   */
  absorb (updates, author, vouched) {
    if (!Array.isArray(updates)) return
    const horizon = incarnationHorizon(this.wallClock())
    let heard = false
    for (const u of updates) {
      if (this.o.accept != null && !this.o.accept(u.endpoint)) {
        this.counts.refused.offLoopback++
        this.o.debug?.({ member: u.endpoint, from: author }, `refused a claim about ${u.endpoint} from ${author}: off loopback, and this peer runs plain`)
        continue
      }
      const held = this.table.get(u.endpoint)
      const d = admit(held, u, { self: this.table.self, author, vouched, horizon })
      switch (d.action) {
        case Action.REFUSE:
          this.counts.refused[d.reason]++
          this.o.debug?.({ member: u.endpoint, from: author, reason: d.reason, incarnation: u.incarnation }, `refused a claim about ${u.endpoint} from ${author}: ${d.reason}`)
          break
        case Action.REFUTE: {
          if (this.table.self.state !== State.ALIVE) break // leaving: never come back to life
          this.counts.refuted++
          this.o.debug?.({ from: author, state: stateNames[u.state], incarnation: u.incarnation }, `${author} says this peer is ${stateNames[u.state]}: refuting with a higher incarnation`)
          this.awareness.apply(1) // others could not hear us: maybe our link, maybe a stall
          const claim = this.table.refute(u.incarnation)
          this.queue.enqueue(this.claimOf(claim), true)
          this.changed(this.table.self)
          break
        }
        case Action.CANDIDATE: {
          const r = this.candidates.offer(d.claim, this.o.clock.now())
          if (r === 'added') { this.counts.candidates++; heard = true; this.o.debug?.({ candidate: u.endpoint, from: author }, `heard of ${u.endpoint} from ${author}: a candidate until it answers a probe`) }
          if (r === 'full') this.counts.candidatesDropped++
          break
        }
        case Action.APPLY:
          this.candidates.take(u.endpoint)
          this.put(d.claim)
          break
        default: { // IGNORE: an equal suspicion from someone else confirms it
          const c = d.claim
          if (c === undefined || c.state !== State.SUSPECT || held?.state !== State.SUSPECT || held.incarnation !== c.incarnation) break
          const by = c.by ?? author
          // Only a member this peer knows counts as a confirmer: made-up names do not shorten it.
          if ((this.table.get(by)?.state ?? State.DEAD) > State.SUSPECT && by !== this.endpoint) break
          if (c.leaving === true) held.leaving = true // the suspicion was a leave after all
          if (this.suspicions.get(c.endpoint)?.confirm(by)) this.queue.enqueue({ ...this.claimOf(held), by }, true)
        }
      }
    }
    if (heard) this.verify()
  }

  /** Puts an admitted claim (or this peer's own conclusion) in the table; passes it on if it changed something. */
  put (claim) {
    const before = this.table.get(claim.endpoint)
    if (this.table.apply(claim, this.o.clock.now()) !== 'changed') return
    const m = this.table.get(claim.endpoint)
    if (m.state <= State.SUSPECT) { this.reconnect.delete(m.endpoint); this.overlay.add(m.endpoint) } else this.overlay.delete(m.endpoint)
    if (m.state === State.SUSPECT) {
      const by = claim.by ?? this.endpoint
      m.by = by
      if (claim.leaving === true) m.leaving = true
      this.queue.enqueue(this.claimOf(m), true)
      this.counts.suspected++
      this.startSuspicion(m.endpoint, by)
    } else {
      // Urgent: a death or a leave, and an alive that ends a suspicion (a refutation relayed).
      this.queue.enqueue(this.claimOf(m), m.state !== State.ALIVE || before?.state === State.SUSPECT)
      this.suspicions.get(m.endpoint)?.cancel()
      this.suspicions.delete(m.endpoint)
    }
    if (before === undefined || before.state !== m.state || before.incarnation !== m.incarnation) this.changed(m)
  }

  changed (m) {
    this.version = this.table.digest()
    this.emitMember(m)
  }

  emitMember (m) {
    this.emit('member', toPublic(m))
  }

  /**
   * A claim about member `m` as this peer passes it on. A suspicion keeps its originator
   * (`by`) through syncs too, so a relayed suspicion is never counted as an independent one.
   */
  claimOf (m) {
    // A leave heard second-hand is passed on as the leave it is (each receiver reads it as a
    // suspicion that ends in `left`), not as a suspicion that would end in a death elsewhere.
    if (m.state === State.SUSPECT && m.leaving === true) return { endpoint: m.endpoint, incarnation: m.incarnation, state: State.LEFT, meta: m.meta, ...(m.service != null ? { service: m.service } : {}) }
    const c = { endpoint: m.endpoint, incarnation: m.incarnation, state: m.state, meta: m.meta }
    if (m.state === State.SUSPECT && m.by !== undefined) c.by = m.by
    if (m.service !== null && m.service !== undefined) c.service = m.service
    return c
  }

  // ---- incoming ----------------------------------------------------------------------

  /** Answers a membership message from another peer. Resolves with the reply, or null. */
  async handle (msg) {
    if (!this.running) return this.left === true ? this.leftAnswer(msg) : null
    switch (msg.type) {
      case 'probe': {
        this.absorb(msg.updates, msg.from, false)
        const ack = this.ackTo(msg.from, this.endpoint)
        // The prober holds this peer as not alive (the buddy system put it in the probe): the
        // answer carries this peer's refutation whatever the queue holds, since the queue's
        // few sends of it may have gone on answers nobody waited for any more.
        if (this.doubted(msg.updates) && !ack.updates.some((u) => u.endpoint === this.endpoint)) ack.updates.push(this.claimOf(this.table.self))
        this.correct(msg.updates, ack.updates)
        return ack
      }
      case 'probe-req': {
        this.absorb(msg.updates, msg.from, false)
        // Only members this peer holds are probed for others: a request never makes this
        // peer connect to an endpoint of the sender's choosing.
        if (msg.target === this.endpoint || this.table.get(msg.target) === undefined) {
          this.counts.refused.probeTarget++
          this.o.debug?.({ target: msg.target, from: msg.from }, `refused to probe ${msg.target} for ${msg.from}: not a member`)
          return { type: 'nack', from: this.endpoint }
        }
        const ack = await this.o.net.request(msg.target, this.message('probe', msg.target), this.c.probeTimeout)
        if (ack?.type !== 'ack') return { type: 'nack', from: this.endpoint }
        this.absorb(ack.updates, msg.target, true)
        return this.ackTo(msg.from, msg.target)
      }
      case 'sync': {
        // Bounded: a cold start of hundreds must not crush the seeds. The sender takes the
        // NACK as no answer and tries again after its backoff (a join) or its next interval.
        if (!this.takeSyncToken()) { this.counts.syncsRefused++; return { type: 'nack', from: this.endpoint } }
        this.counts.syncs++
        // A live member's anti-entropy (a sample of more than itself) gets a sample back; a
        // joiner, a restarted member (a list of itself alone) or a stranger, the whole list.
        const periodic = this.table.get(msg.from)?.state === State.ALIVE && Array.isArray(msg.members) && msg.members.length > 1 && msg.members.length <= this.c.pushPullClaims + 1
        this.absorb(msg.members, msg.from, false)
        return { type: 'sync', from: this.endpoint, members: periodic ? this.sample(this.c.pushPullClaims) : this.fullState() }
      }
      default:
        return null
    }
  }

  /** A push-pull answer from the bucket (maxSyncsPerSecond, a burst of twice that); false when empty. */
  takeSyncToken () {
    const now = this.o.clock.now()
    const rate = this.c.maxSyncsPerSecond
    this.syncTokens = Math.min(2 * rate, this.syncTokens + (now - this.syncTokensAt) * rate / 1000)
    this.syncTokensAt = now
    if (this.syncTokens < 1) return false
    this.syncTokens--
    return true
  }

  /**
   * After its leave, while its peer drains: a probe or a sync is answered with this peer's
   * own `left` claim, so a member that did not hear the leave (it went straight to a few) and
   * probes it learns it from the member itself, and does not declare it dead. In the lab's
   * scale-in at 120 peers, peers that had not heard it declared 225 such deaths.
   */
  leftAnswer (msg) {
    const own = [this.claimOf(this.table.self)]
    if (msg.type === 'probe') return { type: 'ack', from: this.endpoint, updates: own }
    if (msg.type === 'sync') return { type: 'sync', from: this.endpoint, members: own }
    return msg.type === 'probe-req' ? { type: 'nack', from: this.endpoint } : null
  }

  /** Whether `updates` hold a claim that this peer is not alive, at or below its incarnation. */
  doubted (updates) {
    if (!Array.isArray(updates)) return false
    const self = this.table.self
    return updates.some((u) => u.endpoint === self.endpoint && u.state !== State.ALIVE && u.incarnation <= self.incarnation)
  }

  /**
   * Adds to `out` (an answer's claims) this peer's alive claim of each member that `updates`
   * doubts (suspect, dead or left) at an incarnation below the one it holds that member alive
   * at: the member refuted since, and the sender, still waiting on its suspicion, learns it now
   * instead of when gossip reaches it. Seen after a partition healed: the cut-off side's
   * suspicions of a member arrived everywhere at once, the member refuted within a
   * millisecond, and one peer, reached by few of the refutation's sends in the rush of claims,
   * declared it dead 2.6 s later (test/unit/membership.test.js, the healed partition).
   */
  correct (updates, out) {
    if (!Array.isArray(updates)) return
    let room = this.c.maxPiggyback // an answer grows by at most a message's worth of claims, whatever the probe carried
    for (const u of updates) {
      if (room === 0) return
      if (u === null || typeof u !== 'object' || u.state === State.ALIVE) continue
      const m = this.table.get(u.endpoint)
      if (m === undefined || m === this.table.self || m.state !== State.ALIVE || !(m.incarnation > u.incarnation)) continue
      if (!out.some((x) => x.endpoint === m.endpoint)) { out.push(this.claimOf(m)); room-- }
    }
  }

  /** An ack that also tells `to` what we think of it when that is not "alive", so it refutes. */
  ackTo (to, from) {
    const reply = this.message('ack', undefined)
    reply.from = from
    const view = this.table.get(to)
    if (view !== undefined && view.state !== State.ALIVE && !reply.updates.some((u) => u.endpoint === to)) {
      reply.updates.push(this.claimOf(view))
    }
    return reply
  }

  // ---- views -------------------------------------------------------------------------

  /** Every member, this peer included: { endpoint, state, incarnation, meta }. */
  members () {
    return this.table.all().map(toPublic)
  }

  shuffle (list) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(this.o.random() * (i + 1))
      const t = list[i]; list[i] = list[j]; list[j] = t
    }
    return list
  }
}

export function pushPullScale (n) {
  return n <= 32 ? 1 : Math.ceil(Math.log2(n) - Math.log2(32)) + 1
}

export function toPublic (m) {
  return { endpoint: m.endpoint, state: stateNames[m.state], incarnation: m.incarnation, meta: m.meta, service: m.service ?? null }
}
