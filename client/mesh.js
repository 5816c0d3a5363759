// What a client knows of the mesh, and how it reaches it: the table of peers and the parts
// that keep it (connections, their liveness and key proofs, what each peer serves, member
// lists and subsets, discovery, DNS seeds), over the connector it makes. It never decides what
// becomes of a call: it tells the layer above (serve()) when a peer's calls are lost, when the
// routes changed, and hands it the answers to calls.
//
// Its parts are made bottom-up, each given the few calls it makes. The connector's events,
// and a few answers between siblings (a service answer to the connection it was asked on, a
// list to the lists), reach parts made after them through this object.
import { PeerTable } from './peer-table.js'
import { Router } from './routing.js'
import { ZonePreference } from './zone.js'
import { Discovery } from './discovery.js'
import { ServiceBook, ANY } from './services.js'
import { Questions } from '../transport/questions.js'
import { KeyProver } from './key-prover.js'
import { Connections } from './connections.js'
import { Liveness } from './liveness.js'
import { Roster } from './roster.js'
import { MethodWaiters } from './method-waiters.js'
import { Ejector } from './ejection.js'
import { MemberLists } from './member-lists.js'
import { Rebalancer } from './rebalance.js'
import { askMembers, askService } from './asks.js'
import { decode, hasSignature } from '../protocol/codec.js'
import { MessageType, MemberState, memberStateNames } from '../protocol/constants.js'
import { dnsSeedsOf } from '../transport/dns-seeds.js'

export class ClientMesh {
  /**
   * @param {object} o  the client's resolved options (client/options.js)
   * @param {(snapshot: object) => void} onPeer  a peer learned, lost, ejected or back (the client's 'peer' event)
   */
  constructor (o, onPeer) {
    this.o = o
    this.closed = false
    this.listener = null // serve()
    this.counts = {
      malformed: 0, //    frames that broke the wire format
      peersRefused: 0, // peers a member list named that were not taken: over maxPeers, or refused by ZeroMQ
      redials: 0, //      peers dialled at once because the lists showed them alive again while their connection was down
      offLoopback: 0, //  endpoints off loopback a plain client was given (lists, DNS) and never dialled
      beyondHorizon: 0, // list claims refused: an incarnation more than 24 h ahead of the wall clock
      verified: 0, //     peers a list showed gone that answered the client themselves, and stayed in rotation
      proofs: 0, //       key proofs sent (a secured client, on each new connection: client/key-prover.js)
      moves: 0, //        connections moved from a crowded peer to another (client/rebalance.js)
    }
    const closed = () => this.closed
    const clock = o.clock
    this.table = new PeerTable((snapshot) => {
      o.logger.debug({ peer: snapshot.endpoint, state: snapshot.state, removed: snapshot.removed === true, lastError: snapshot.lastError }, `peer ${snapshot.endpoint} ${snapshot.removed ? 'removed' : snapshot.state}`)
      onPeer(snapshot)
    }, () => clock.now())
    const table = this.table
    this.router = new Router(table) // which peers may take a call (method, version, labels)
    this.zones = o.zone === null ? null : new ZonePreference({ zone: o.zone, random: o.random })
    this.transport = o.transport({ // a connector (options.js: the transport option)
      maxMessageSize: o.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval,
      heartbeatTimeout: o.heartbeatTimeout,
      onMessage: (ep, frames) => this.onMessage(ep, frames),
      onUp: (ep) => this.connections.up(ep),
      onDown: (ep) => this.connections.down(ep, 'disconnected'),
      onHeartbeat: (ep, meta) => { if (this.o.discover) this.discovery.seen(ep, meta.mv) }, // a PONG's mv, as a reply's: a client that sends nothing still hears a change
      credentials: o.security || null,
      onRefused: (ep, refusal) => this.connections.refused(ep, refusal),
    })
    const send = this.send = (ep, frames, done) => this.transport.send(ep, frames, done)
    this.questions = new Questions({ send, clock })
    this.prover = o.security ? new KeyProver({ credentials: o.security, questions: this.questions, send, timeout: o.membersTimeout, counts: this.counts }) : null
    this.ejector = new Ejector({ table, clock, ...o.ejection })
    this.liveness = new Liveness({
      table,
      questions: this.questions,
      clock,
      timeout: o.membersTimeout,
      counts: this.counts,
      closed,
      onUp: (ep, reason) => this.connections.up(ep, reason),
    })
    this.services = new ServiceBook({
      questions: this.questions,
      timeout: o.membersTimeout,
      onService: (ep, d, features) => {
        this.connections.served(ep, d, features)
        if (o.zone != null && this.roster.limited()) this.lists.queueResubset() // its zone now known: the subset may take it in
      },
      onNoAnswer: (ep) => this.connections.noServiceAnswer(ep),
    })
    // Every member the lists show is known here; a bounded subset of them, ranked by this
    // client's own random key, is connected (the table).
    this.roster = new Roster({
      maxPeers: o.maxPeers,
      subset: o.subset,
      key: Math.floor(o.random() * 2 ** 32).toString(36),
      table,
      services: this.services,
      // A client with a zone takes its zone's members first (subset.js): by their own word, or what a peer with their digest said.
      local: o.zone == null ? null : (ep) => this.descriptorOf(ep)?.labels?.zone === o.zone,
    })
    this.discovery = new Discovery({
      questions: this.questions,
      clock,
      random: o.random,
      timeout: o.membersTimeout,
      refreshInterval: o.discover ? o.refreshInterval : 0,
      upPeers: () => table.up(),
      onList: (list, from) => this.lists.learn(list.members, from),
    })
    this.connections = new Connections({
      table,
      transport: this.transport,
      counts: this.counts,
      security: o.security,
      discover: o.discover,
      logger: o.logger,
      closed,
      liveness: this.liveness,
      discovery: this.discovery,
      questions: this.questions,
      services: this.services,
      prover: this.prover,
      ejector: this.ejector,
      failOver: (peer, notTaken) => this.listener.lost(peer, notTaken),
      routesChanged: () => this.routesChanged(),
      refusedByAll: (err) => this.listener.refusedByAll(err),
    })
    this.seeds = new Set(o.seeds)
    // Member lists and DNS seeds taken in, the subset connected (member-lists.js).
    this.lists = new MemberLists({
      table,
      roster: this.roster,
      seeds: this.seeds,
      givenSeeds: o.seeds,
      anyHost: o.security !== null, // CURVE, or plain on purpose (security: false)
      maxPeers: o.maxPeers,
      clock,
      wallClock: o.wallClock,
      counts: this.counts,
      transport: this.transport,
      connections: this.connections,
      liveness: this.liveness,
      services: this.services,
      routesChanged: () => this.routesChanged(),
      closed,
    })
    // Subsets even out: a client moves a connection from a crowded peer to another (rebalance.js).
    this.rebalancer = new Rebalancer({
      interval: o.rebalanceInterval,
      clock,
      random: o.random,
      questions: this.questions,
      held: () => table.up(),
      roster: this.roster,
      resubset: () => this.lists.queueResubset(),
      counts: this.counts,
    })
    this.methodWaiters = new MethodWaiters({ router: this.router, clock, timeout: o.timeout, where: o.where })
    this.viewGen = 0 // bumped by routesChanged(): a member list, a SERVICE answer, a connection up or down
    this.view = { tableGen: -1, viewGen: -1, groups: new Map(), learning: null } // viewCache()
    this.dns = dnsSeedsOf(o, (found) => this.lists.onDnsSeeds(found))
    // What members() and describe() use (asks.js).
    this.asking = {
      table,
      clock,
      timeout: o.timeout,
      membersTimeout: o.membersTimeout,
      random: o.random,
      closed,
      connect: (ep) => this.connections.add(ep),
      fetchList: (ep) => this.discovery.fetch(ep),
    }
  }

  /**
   * Starts dialling the seeds, discovering and resolving DNS seeds, once the layer above
   * listens: { lost(peer, notTaken), routesChanged(), refusedByAll(err), replies(peer,
   * replies, bytes), stream(peer, msg, bytes) }.
   */
  serve (listener) {
    this.listener = listener
    for (const ep of this.o.seeds) this.connections.add(ep)
    this.discovery.start()
    this.dns?.start()
    this.rebalancer.start()
  }

  /** Something changed what peers may take which call: waitFor() and the waiting calls look again. */
  routesChanged () {
    this.viewGen++
    this.methodWaiters.check()
    this.listener.routesChanged()
  }

  /**
   * Whether a peer that may take `method` may still come: the client has not had a member
   * list yet, a peer's service is not known yet, a peer that serves it is down for now, or a
   * member outside the subset serves it (which the subset then takes in).
   */
  mayStillRoute (method, version, where, group) {
    const may = (this.o.discover && this.discovery.known === null) ||
      this.router.mayCome(method, version, where, (digest) => this.services.known(digest), group) ||
      this.roster.outsideMayServe(method, group)
    if (may && this.roster.limited()) this.lists.queueResubset() // a member not connected may serve it: the subset takes it in
    return may
  }

  /** No peer is up: the DNS names may point elsewhere now, and the seeds are the way back in. */
  nothingUp () {
    this.dns?.refresh()
    this.lists.restoreSeeds()
  }

  /** Why no peer may ever take `call` (an UnknownMethodError), or null when one may. */
  unroutable (call) {
    const { router } = this
    if (router.candidates(call.method, call.version, call.where, call.group).length > 0) return null
    if (router.mayCome(call.method, call.version, call.where, (d) => this.services.known(d), call.group)) return null
    return call.kind.unroutable(`zeromesh: ${router.explain(call.method, call.version, call.where, call.group)}`)
  }

  /** `method` is called: the subset must hold peers that serve it. */
  called (method) {
    if (!this.roster.methods.has(method) && this.roster.called(method)) this.lists.queueResubset()
  }

  /** The descriptor of what `endpoint` subscribes to: its own word when connected, else what a peer with its digest said; null when unknown. */
  descriptorOf (endpoint) {
    const d = this.table.get(endpoint)?.service ?? null
    if (d !== null) return d
    const digest = this.roster.get(endpoint)?.service ?? this.table.get(endpoint)?.hint ?? null
    return digest === null ? null : this.services.known(digest) ?? null
  }

  /**
   * Whether the up peers serving `method` serve it as a stream (PROTOCOL.md 4.8.2): true or
   * false by the first of them that said what it serves, null when none has (or only older
   * peers, which may serve anything).
   */
  streaming (method) {
    for (const p of this.router.candidates(method, null, null, undefined)) {
      const s = p.service
      if (s === ANY) continue
      return s.streaming.has(method)
    }
    return null
  }

  /** The groups that subscribe to `event`, as far as this client knows now (connected peers, and members by their digest). */
  groupsOf (event) {
    const cache = this.viewCache()
    let g = cache.groups.get(event)
    if (g === undefined) {
      if (cache.groups.size >= 1024) cache.groups.clear() // bounded: callers choose event names
      cache.groups.set(event, g = Object.freeze(this.findGroups(event)))
    }
    return g
  }

  /**
   * What groupsOf() and learning() found, valid while nothing changed which peers take what
   * (the table's generation, and this mesh's, bumped by every member list and SERVICE answer):
   * a publish asks both, and looking through every peer and member each time was most of its cost.
   */
  viewCache () {
    const c = this.view
    if (c.tableGen === this.table.gen && c.viewGen === this.viewGen) return c
    this.view = { tableGen: this.table.gen, viewGen: this.viewGen, groups: new Map(), learning: null }
    return this.view
  }

  findGroups (event) {
    const groups = new Set()
    const add = (d) => { if (d !== null && d !== ANY) for (const g of d.groups.get(event) ?? []) groups.add(g) }
    for (const p of this.table.entries.values()) add(p.service)
    for (const [ep, r] of this.roster.members) if (r.state <= MemberState.SUSPECT && this.table.get(ep) === undefined) add(this.descriptorOf(ep))
    return [...groups].sort()
  }

  /**
   * The members that subscribe to `event` in any group, connected or not (a broadcast reaches
   * every one): { targets } alive or suspect, or whose word is not known yet (they are asked),
   * and { gone }: [{ endpoint, reason }], subscribers the member lists show dead or left.
   */
  subscribersOf (event) {
    const targets = []
    const gone = []
    this.eachKnown((ep, state) => {
      const d = this.descriptorOf(ep)
      if (d === ANY || (d !== null && !d.groups.has(event))) return
      if (state > MemberState.SUSPECT) { if (d !== null) gone.push({ endpoint: ep, reason: `${memberStateNames[state]} by the member lists` }); return }
      targets.push(ep)
    })
    return { targets, gone }
  }

  /** The peers that serve `method` and are not dead or left by the member lists, connected or not (client.gather()). */
  serversOf (method) {
    const targets = []
    this.eachKnown((ep, state) => {
      const d = this.descriptorOf(ep)
      if (d !== null && d !== ANY && d.has.has(method) && state <= MemberState.SUSPECT) targets.push(ep)
    })
    return targets
  }

  /** Calls `fn(endpoint, state)` once for each member this client knows: those connected (their claim's state), then the member lists'. */
  eachKnown (fn) {
    const seen = new Set()
    const look = (ep, state) => {
      if (seen.has(ep)) return
      seen.add(ep)
      fn(ep, state)
    }
    for (const p of this.table.entries.values()) look(p.endpoint, p.claim?.state ?? MemberState.ALIVE)
    for (const [ep, r] of this.roster.members) look(ep, r.state)
  }

  /**
   * Whether this client is still learning who subscribes to events: its first member list is
   * not in (with discovery on), or a peer it connects to has not said what it serves, up or
   * connecting for the first time while the lists show it alive (a member outside the subset
   * that may subscribe is taken in, client.called(), and so counts once it is dialled). A
   * publish or broadcast waits for this to end, a little (client.js learnt()), so that a fresh
   * client reaches every group and every subscriber, not its seeds' alone.
   */
  learning () {
    const cache = this.viewCache()
    if (cache.learning === null) cache.learning = this.findLearning()
    return cache.learning
  }

  findLearning () {
    if (this.o.discover && this.discovery.known === null) return true
    for (const p of this.table.entries.values()) {
      if (p.service !== null || p.refusal !== null || p.retiring) continue
      if (p.state === 'up' || (!p.everUp && (this.roster.get(p.endpoint)?.state ?? MemberState.DEAD) <= MemberState.SUSPECT)) return true
    }
    return false
  }

  /** Connects `endpoint` for a call pinned to it (a broadcast's delivery to a member outside the subset). */
  reach (endpoint) {
    if (this.table.get(endpoint) === undefined) this.connections.add(endpoint)
  }

  /** `peer` answered UNKNOWN_METHOD for `method`: it is not sent that again until it says what it serves. */
  notServing (peer, method) {
    ;(peer.notServed ??= new Set()).add(method)
    this.table.changed()
    if (peer.service !== ANY && peer.connected) this.services.ask(peer.endpoint)
  }

  /** A peer left out of the subset has no calls left: it is let go. */
  retire (peer) {
    this.connections.remove(peer)
  }

  onMessage (endpoint, frames) {
    if (frames.length === 0 || !hasSignature(frames[0])) { this.counts.malformed++; return }
    let msg
    let bytes = frames[0].length
    try {
      if (frames.length === 1) msg = decode(frames[0], this.o)
      else { // a reply or stream items with bulk frames after them (PROTOCOL.md 4.2.1, 4.10)
        const bulk = frames.slice(1)
        for (let i = 0; i < bulk.length; i++) bytes += bulk[i].length
        msg = decode(frames[0], this.o, bulk)
      }
    } catch {
      this.counts.malformed++
      return
    }
    const peer = this.table.get(endpoint)
    if (peer === undefined) return
    switch (msg.type) {
      case MessageType.REPLY:
        peer.heardAt = this.o.clock.now()
        if (typeof msg.meta.load === 'number') { peer.load = msg.meta.load; if (this.zones !== null) peer.loadAt = peer.heardAt }
        this.listener.replies(peer, msg.replies, bytes)
        if (this.o.discover) this.discovery.seen(endpoint, msg.meta.mv)
        return
      case MessageType.STREAM_ITEM:
      case MessageType.STREAM_CREDIT:
      case MessageType.STREAM_END:
        return this.listener.stream(peer, msg, bytes)
      case MessageType.MEMBERS:
        return this.discovery.onMembers(endpoint, msg)
      case MessageType.SERVICE:
        return this.services.onService(endpoint, msg)
      case MessageType.PONG:
        return this.questions.answer(endpoint, msg.seq, msg)
      case MessageType.ERROR:
        if (this.services.onError(endpoint, msg)) return // an older peer: it does not know the question
        // The peer cannot read what we send (another protocol version): nothing was run.
        this.table.setState(peer, 'down', `protocol error from peer: ${msg.message} (peer speaks versions ${msg.minVersion}..${msg.maxVersion})`)
        this.listener.lost(peer, true)
    }
  }

  members (from) {
    return askMembers(this.asking, from)
  }

  describe (endpoint) {
    return askService(this.asking, endpoint)
  }

  /** Stops every question and timer; `err` fails what waits for a method. The connector closes last (close()). */
  stop (err) {
    this.closed = true
    this.discovery.stop()
    this.rebalancer.stop()
    for (const peer of this.table.entries.values()) this.liveness.stop(peer)
    this.questions.stop()
    this.dns?.stop()
    this.methodWaiters.close(err)
  }

  close () {
    return this.transport.close()
  }
}
