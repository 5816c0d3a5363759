// What a zeromesh peer is inside (the Peer users hold, peer.js, is its face): the composition
// root that makes its parts and gives each the few things it uses, the socket's message table
// (onMessage, onZeromesh, messageTable(): each part routes the messages it takes; requests,
// events and streams enter by the one intake, intake.js), and its life: start, drain and
// stop. It answers 10/FLP pings and requests too.
import { startMemoryPolicy, pressedMessage } from './memory-policy.js'
import { middlewareOf } from '../runtime/middleware.js'
import { METHOD } from '../runtime/contract.js'
import { readContracts } from '../protocol/contracts.js'
import { PeerCluster } from './cluster.js'
import { answerGossip } from './gossip-transport.js'
import { ConnectionTable } from './connections.js'
import { ClientCount } from './client-count.js'
import { buildWork } from './work.js'
import { Flows } from './flows.js'
import { finishInFlight, awaitQuiet, QUIET_MS } from './drain.js'
import { PeerPublisher } from './publisher.js'
import { collectGarbage as collectThisHeap } from './collect.js'
import { PeerSecurity } from './security.js'
import { HandshakeReports } from './handshake-reports.js'
import { requestReporter } from './request-reports.js'
import { OwnService } from './service.js'
import { startHandlers } from './handlers.js'
import { resolvePeerOptions } from './options.js'
import { durableHost } from './durable-host.js'
import {
  decode, encodePong, encodeError, encodeMembers, encodeService,
} from '../protocol/codec.js'
import { ReplyOutbox } from './reply-outbox.js'
import { FlpServer } from './flp-server.js'
import { classify, Kind } from '../protocol/flp.js'
import { MessageType, Feature } from '../protocol/constants.js'
import { ClosedError, ProtocolError } from '../protocol/errors.js'
import { userFault, safeEmit, safeLogger } from '../runtime/user-code.js'
import { SILENT_LOGGER } from '../runtime/options.js'

// What members send each other: a connection that sends only these is not a client's (cc).
const MEMBERSHIP_REQUESTS = new Set([MessageType.PROBE, MessageType.PROBE_REQ, MessageType.SYNC, MessageType.SEALED, MessageType.ACK, MessageType.NACK])

export class PeerCore {
  /**
   * @param {object} [options]  PeerOptions (index.d.ts; docs/reference/peer.md)
   * @param {import('node:events').EventEmitter} emitter  the Peer users hold: its events are told there
   */
  constructor (options, emitter) {
    this.emitter = emitter
    this.options = resolvePeerOptions(options)
    this.options.logger = safeLogger(this.options.logger, (level, err) => userFault(emitter, SILENT_LOGGER, `the logger's ${level}()`, err))
    this.state = 'new' // new -> starting -> running -> stopping -> stopped
    this.transport = null
    this.dispatcher = null
    this.admission = null // whether new work is taken (admission.js), once started
    this.streams = null // PeerStreams, once started
    this.requests = null // PeerRequests, once started
    this.intake = null // the one way requests, events and streams enter (intake.js), once started
    this.recent = null // the duplicates memory, by connection (recent-requests.js), once started
    this.routes = [] //   the socket's message table, by type (messageTable()), once started
    this.durableHost = null // what its durable log (the durable option) is handed, once started (durable-host.js)
    this.connections = new ConnectionTable() // what it knows of each client connection (connections.js)
    this.clients = new ClientCount() //          how many connections clients hold now, for `cc` (client-count.js)
    this.flows = new Flows({ header: this.options.flowHeader }) // the flows that share it when it is busy (flows.js)
    this.counts = { received: 0, malformed: 0, flpPings: 0, flpRequests: 0, flpTooLarge: 0, protocolErrors: 0, dropped: 0, duplicates: 0, drops: {}, memory: { collections: 0, sheds: 0 } }
    this.stopping = null
    this.starting = null
    this.gossip = null
    this.membership = null
    this.pool = null
    this.replies = new ReplyOutbox({
      send: (clientId, frames) => this.transport.send(clientId, frames),
      mv: () => this.replyMeta.mv,
      load: () => this.dispatcher.inflight,
      limits: this.options,
    })
    this.replyMeta = Object.freeze({}) // rides on every reply: { mv } membership digest
    this.flp = new FlpServer({ send: (clientId, frames) => this.transport?.send(clientId, frames), handler: this.options.flpHandler, limits: this.options, counts: this.counts })
    this.security = new PeerSecurity(this.options, this.connections) // seal key, key proofs, the allow-list (security.js)
    this.reports = new HandshakeReports({ clock: this.options.clock, logger: this.options.logger, tell: (e, p) => this.tell(e, p), refused: this.security.counts.refused })
    this.latency = null // a LatencyHistogram (ops/metrics.js) once metrics are on: time from arrival to reply
    this.cluster = null // gossip, membership, DNS seeds, once started (cluster.js)
    const o = this.options
    this.own = new OwnService({ version: o.serviceVersion, labels: o.labels, capacity: o.capacity ?? null, durable: o.durable })
    this.memory = null // what it does about its memory (memory-policy.js), once started
    this.limiter = null // the memory limit's watch (memory-limit.js), once started with a memoryLimit
    this.middleware = [] // peer.use()'s, then the handler modules', run on this thread before each handler (runtime/middleware.js)
    // Debug lines cost nothing unless the logger takes them: decided once, here.
    this.debugging = typeof o.logger.isLevelEnabled === 'function' ? o.logger.isLevelEnabled('debug') : o.logger !== SILENT_LOGGER
    if (!Array.isArray(o.handlers)) this.own.addAll(o.handlers)
    this.own.subscribeAll(o.subscriptions)
    this.events = null // PeerEvents, once started
    // How it publishes events, its handlers too: a Client of its own, made when first used.
    this.publisher = new PeerPublisher({ endpoint: () => this.endpoint, security: o.security, options: o })
  }

  /** Publishes `event` from this peer, as client.publish() does (docs/guides/events.md). */
  publish (event, payload, options) {
    return this.publisher.publish(event, payload, options)
  }

  /** Broadcasts `event` from this peer, as client.broadcast() does. */
  broadcast (event, payload, options) {
    return this.publisher.broadcast(event, payload, options)
  }

  /**
   * Subscribes `handler` to `event` in `group` (the event's own name by default) from now on,
   * or replaces the handler of that event and group: a published event goes to one peer of
   * each group that subscribes to it (docs/guides/events.md). What this peer states changes,
   * as serve() changes it.
   */
  subscribe (event, handler, options = {}) {
    const group = options?.group ?? event
    if (this.own.subscribe(event, handler, group)) this.serviceChanged(`now subscribes to ${event}${group === event ? '' : ` in group ${group}`}`)
  }

  /** Ends the subscription of `event` in `group` (the event's name by default): returns whether there was one. */
  unsubscribe (event, options = {}) {
    const group = options?.group ?? event
    if (!this.own.unsubscribe(event, group)) return false
    this.serviceChanged(`no longer subscribes to ${event}${group === event ? '' : ` in group ${group}`}`)
    return true
  }

  /**
   * What this peer serves: { methods, version, labels, capacity, digest }. Clients ask it
   * this (SERVICE_GET) and route each method to the peers that serve it.
   */
  service () {
    const d = this.own.descriptor
    return { methods: [...d.methods], version: d.version, labels: { ...d.labels }, capacity: d.capacity, contracts: readContracts(d.contracts) ?? [], events: (d.events ?? []).map(([event, group]) => ({ event, group })), streams: [...(d.streams ?? [])], digest: d.digest }
  }

  /**
   * Adds `fn`, an `async (ctx, next) => ...` middleware, to the end of the chain every request
   * and stream goes through on this (the main) thread before its handler (a handler module's
   * `middleware` is added when the peer starts): docs/guides/middleware.md. Returns the peer.
   */
  use (fn) {
    this.middleware.push(middlewareOf(fn, 'peer.use(fn)'))
    return this
  }

  /**
   * Serves `method` with `fn` from now on (or replaces its handler). A new method changes
   * what this peer serves: its claim goes out at a higher incarnation with the new digest, so
   * clients learn it within a member-list refresh.
   */
  serve (method, fn) {
    if (this.own.serve(method, fn)) this.serviceChanged(`now serves ${method}${fn[METHOD] === undefined ? '' : ` (contract ${fn[METHOD].contract})`}`)
  }

  /**
   * Stops serving `method`: new requests for it are answered UNKNOWN_METHOD (a client retries
   * them on a peer that serves it), requests already running finish. Returns whether it was served.
   */
  unserve (method) {
    if (!this.own.unserve(method)) return false
    this.serviceChanged(`no longer serves ${method}`)
    return true
  }

  serviceChanged (what) {
    this.membership?.setService(this.own.descriptor.digest)
    if (this.state === 'running') this.options.logger.info({ methods: this.own.descriptor.methods, digest: this.own.descriptor.digest }, `${what}`)
  }

  /** Emits `event` to the user's listeners; one that throws is reported (userFault), never thrown into zeromesh. */
  tell (event, payload) {
    safeEmit(this.emitter, this.options.logger, event, payload)
  }

  /** Joined the cluster (or has no seeds) and serving; false from the moment it drains. */
  get ready () {
    return this.state === 'running' && this.membership?.joined === true
  }

  /** The endpoint clients and other peers use to reach this peer (set once started). */
  get endpoint () {
    return this.transport?.endpoint ?? null
  }

  /** Binds the socket. Resolves with the endpoint once requests can be served. */
  start () {
    if (this.state !== 'new') return Promise.reject(new ClosedError(`zeromesh: Peer.start() called when the peer is ${this.state}`))
    this.state = 'starting'
    this.starting = this.startNow()
    return this.starting
  }

  /** The start, step by step: its handlers, its socket, the work it takes, the cluster; then it runs. */
  async startNow () {
    const o = this.options
    this.pool = await this.orStopped(() => startHandlers(o, this.own, this.middleware, (err) => this.unhealthy(err), this.publisher))
    this.transport = this.listener()
    await this.orStopped(() => this.transport.bind(), () => this.pool?.stop())
    const endpoint = this.transport.endpoint
    // Its admission, dispatcher, duplicates memory, the three kinds of work and their one intake (work.js):
    Object.assign(this, buildWork({
      options: o,
      endpoint,
      own: this.own,
      middleware: this.middleware,
      pool: this.pool,
      publisher: this.publisher,
      connections: this.connections,
      flows: this.flows,
      replies: this.replies,
      counts: this.counts,
      latency: () => this.latency,
      debug: this.debugging ? requestReporter(o.logger, this.reports, o.clock) : null,
      pressedMessage: () => pressedMessage(this.limiter, o.memoryLimit),
      send: (clientId, frames, done) => this.transport.send(clientId, frames, done),
      asked: (conn, now) => this.security.asked(conn, now),
    }))
    this.routes = this.messageTable()
    this.cluster = this.clusterOf(endpoint)
    this.gossip = this.cluster.gossip
    this.membership = this.cluster.membership
    await this.cluster.start() // the first DNS answer before joining
    this.replyMeta = Object.freeze({ mv: this.membership.version })
    this.state = 'running'
    this.cluster.join()
    await this.attachDurable()
    this.startMemory()
    this.announce(endpoint)
    // The allow-list's files changed (a Kubernetes Secret or ConfigMap update sends no signal):
    // read again, as on SIGHUP.
    this.security.start(() => { this.reloadAllowList().catch(() => {}) })
    return endpoint
  }

  /** A step of the start: what `step` resolves with, or, when it fails, `undo` runs and the peer is stopped. */
  async orStopped (step, undo) {
    try {
      return await step()
    } catch (err) {
      await undo?.()
      this.state = 'stopped'
      throw err
    }
  }

  /** Its socket (not bound yet): every message it receives comes to onMessage. */
  listener () {
    const o = this.options
    return o.transport.listener({
      clock: o.clock,
      bind: o.bind,
      advertise: o.advertise,
      linger: o.stopLinger,
      maxMessageSize: o.maxMessageSize,
      heartbeatInterval: o.heartbeatInterval,
      heartbeatTimeout: o.heartbeatTimeout,
      onMessage: (id, frames) => this.onMessage(id, frames),
      onDrop: (why) => { this.counts.dropped++; this.counts.drops[why] = (this.counts.drops[why] ?? 0) + 1 },
      security: o.security,
      onRefused: (r) => this.reports.refused(r),
    })
  }

  /** Its gossip, membership and DNS seeds (cluster.js), for a peer bound at `endpoint`. */
  clusterOf (endpoint) {
    return new PeerCluster({
      options: this.options,
      endpoint,
      service: this.own.descriptor.digest,
      seal: this.security.sealer,
      reports: this.reports,
      debugging: this.debugging,
      tell: (e, p) => this.tell(e, p),
      onMember: (m) => this.onMember(m),
    })
  }

  /** What it does about its memory (memory-policy.js): with a memoryLimit, new work is taken by the room it leaves. */
  startMemory () {
    this.memory = startMemoryPolicy({
      options: this.options,
      activity: () => this.counts.received + (this.durableHost?.runs ?? 0), // durable deliveries are activity too
      collect: () => this.collectGarbage(),
      shed: () => { this.closeConnections().catch(() => {}) },
      counts: this.counts.memory,
    })
    this.limiter = this.memory.limiter
    if (this.limiter !== null) this.admission.memory = this.limiter
  }

  /** Hands its durable log (the durable option, runtime/durable-hook.js) what it needs to run durable events here, once it runs. */
  async attachDurable () {
    const o = this.options
    if (o.durable === null) return
    this.durableHost = durableHost({ subscriptions: this.own.subscriptions, admission: this.admission, dispatcher: this.dispatcher, clock: o.clock, owns: (e) => o.durable.owns(e) })
    await o.durable.attach(this.durableHost)
  }

  /** Says what it serves, where and how, once running. */
  announce (endpoint) {
    const o = this.options
    const sec = o.security
    const methods = Object.keys(this.own.handlers)
    const threads = this.pool?.threads.length ?? 0
    o.logger.info({ endpoint, methods, threads, secured: Boolean(sec), seeds: o.seeds, memoryLimit: o.memoryLimit },
      `peer ${endpoint} serving ${methods.join(', ') || 'no methods'} ${this.pool === null ? 'on the main thread' : `on ${threads} thread${threads === 1 ? '' : 's'}`}`)
    if (sec) o.logger.info({ clusterKey: sec.cluster.publicKey, allowed: sec.allowed.size }, `secured: CURVE with cluster key ${sec.cluster.publicKey}, ${sec.allowed.size} client key${sec.allowed.size === 1 ? '' : 's'} allowed`)
    if (sec === false) o.logger.warn({ secured: false }, 'INSECURE: plain traffic on purpose (security: false); anyone who reaches this port can call it and read its replies')
  }

  pongMeta () {
    return { mv: this.replyMeta.mv, inc: this.membership.table.self.incarnation, st: this.membership.table.self.state }
  }

  onMember (m) {
    this.replyMeta = Object.freeze({ mv: this.membership.version })
    this.tell('member', m)
  }

  onMessage (clientId, frames) {
    this.counts.received++
    if (this.limiter !== null) this.limiter.received(frames.length === 1 ? frames[0].length : frameBytes(frames))
    switch (classify(frames)) {
      case Kind.ZEROMESH: return this.onZeromesh(clientId, frames[0])
      case Kind.FLP_PING: return this.flp.ping(clientId)
      case Kind.FLP_REQUEST: return this.flp.request(clientId, frames)
      default:
        this.counts.malformed++
    }
  }

  onZeromesh (clientId, frame) {
    const conn = this.connections.of(clientId)
    // A connection cut at a revocation gets no more answers: it may only prove an allowed key,
    // or seal a membership request, to be answered again (key-proofs.js).
    if (conn.cut) {
      const req = this.security.fromCut(conn, frame)
      if (req !== null) this.onGossip(clientId, req)
      return
    }
    let msg
    try {
      msg = decode(frame, this.options)
    } catch (err) {
      this.counts.malformed++
      if (err instanceof ProtocolError && err.protocolCode !== undefined) {
        this.counts.protocolErrors++
        this.transport.send(clientId, [encodeError(err.protocolCode, err.message)])
      }
      return
    }
    // A secured peer remembers every connection that has not proved its key: a revocation cuts them.
    if (this.security.keyProofs !== null && msg.type !== MessageType.KEY_PROOF && msg.type !== MessageType.SEALED) this.security.seen(conn)
    if (!MEMBERSHIP_REQUESTS.has(msg.type)) this.clients.heard(conn.key, this.options.clock.now())
    // REPLY, PONG, ERROR, ACK, NACK and MEMBERS are answers, never sent to a peer's bound
    // socket: no part takes them, they are counted and dropped.
    const route = this.routes[msg.type]
    if (route === undefined) this.counts.malformed++
    else route(conn, msg, frame)
  }

  /**
   * The socket's message table, by message type: each part gives the entries of the messages
   * it takes (the kinds of work and the intake, the streams, the security), and the peer its
   * own answers. Made once the parts are; a type two parts claimed would be a mistake here.
   */
  messageTable () {
    const malformed = () => { this.counts.malformed++ }
    const parts = [
      this.requests.routes(this.intake),
      this.events.routes(this.intake),
      this.streams.routes(this.intake),
      this.intake.routes({ streams: this.streams, dispatcher: this.dispatcher }),
      this.security.routes((conn, req) => this.onGossip(conn.id, req), malformed),
      this.answers(),
    ]
    const table = []
    for (const part of parts) {
      for (const [type, route] of Object.entries(part)) {
        if (table[type] !== undefined) throw new Error(`zeromesh: message type ${type} has two routes`)
        table[type] = route
      }
    }
    return table
  }

  /** What the peer answers itself: PING, MEMBERS_GET and SERVICE_GET. */
  answers () {
    return {
      // The answer carries this peer's own incarnation and state (0 alive, 3 leaving): a client
      // that read in a list that it is gone asks it, and believes it (PROTOCOL.md 4.4). A secured
      // peer adds a challenge to prove the client's key with (4.9), except to a heartbeat (seq 0);
      // a question is told how many clients this peer holds (4.4: client/rebalance.js).
      [MessageType.PING]: (conn, msg) => this.transport.send(conn.id, [encodePong(msg.seq, msg.seq === 0 ? this.pongMeta() : { ...this.pongMeta(), cc: this.clients.count(this.options.clock.now()), ...(this.security.keyProofs === null ? {} : { ch: this.security.challenge(conn) }) })]),
      [MessageType.MEMBERS_GET]: (conn, msg) => this.transport.send(conn.id, [encodeMembers(msg.seq, this.membership.version, this.membership.fullState())]),
      [MessageType.SERVICE_GET]: (conn, msg) => this.transport.send(conn.id, [encodeService(msg.seq, this.own.descriptor, Feature.STREAMS | Feature.EVENTS)]),
    }
  }

  /**
   * Reads the allow-list again (the keys, files and directories `security.allow` named) and
   * lets in exactly those keys from now on; connections already made stay. Resolves with
   * { keys } (how many). On an error the list in force stays as it was.
   */
  reloadAllowList () {
    return this.security.reload(this.transport, this.streams, () => this.closeConnections())
  }

  onGossip (clientId, msg) {
    answerGossip(this.membership, msg, (frame) => { if (this.transport?.open) this.transport.send(clientId, [frame]) }, () => { this.counts.dropped++ })
  }

  /**
   * The peer cannot serve (its handler threads are gone and cannot be started again): it says
   * so with an 'unhealthy' event and stops, leaving the cluster, rather than gossip that it is
   * alive and answer BUSY for ever. `zeromesh peer` exits with status 1, for a supervisor to
   * restart it.
   */
  unhealthy (err) {
    if (this.state !== 'running') return
    this.options.logger.error({ err: err?.message ?? String(err) }, `unhealthy: ${err?.message ?? err}; leaving the cluster`)
    this.tell('unhealthy', err)
    this.stop().catch(() => {})
  }

  /**
   * Closes every connection this peer accepted, at once (its memory limit was passed:
   * memory-limit.js; or a key was revoked while connections that proved none were about:
   * security.js): ZeroMQ lets go of what their queues hold, streams end unanswered, and
   * clients reconnect within their reconnect interval (and prove their keys again).
   */
  async closeConnections () {
    if ((this.state !== 'running' && this.state !== 'stopping') || typeof this.transport.rebind !== 'function') return
    this.streams.endAll(null, null)
    this.security.keyProofs?.reset()
    this.connections.clear()
    this.clients.clear()
    await this.transport.rebind()
  }

  /**
   * A full collection of the main thread's heap and each handler thread's, to give a burst's
   * buffers back once the peer is idle (it does so itself: peer/idle-collect.js). Not for the
   * request path: it pauses the thread for a few milliseconds.
   */
  collectGarbage () {
    collectThisHeap()
    this.pool?.collect()
  }

  /** Counters of what this peer received, answered and dropped. */
  stats () {
    return {
      ...this.counts,
      drops: { ...this.counts.drops },
      memory: { ...this.counts.memory },
      ...(this.dispatcher?.stats() ?? {}),
      inflight: this.admission?.inflight ?? 0,
      inflightBytes: this.admission?.bytes ?? 0,
      flows: { holding: this.admission?.flows ?? 0, byShare: this.admission?.byShare ?? 0 },
      events: this.events?.stats() ?? null,
      streams: this.streams === null ? null : { ...this.streams.counts, open: this.streams.size, held: this.streams.held, awaitingCredit: this.streams.awaitingCredit },
      threads: this.pool === null ? null : { ...this.pool.counts, size: this.pool.threads.length, load: this.pool.load, queued: this.pool.queue.length, places: this.pool.places(this.options.maxQueue, this.options.maxQueueMs) },
      security: this.security.stats(this.gossip?.counts.handshakeFailures ?? 0),
      membership: this.cluster?.stats() ?? { refused: { endpoints: 0 }, candidatesHeld: 0, gossipSent: 0, gossipBytes: 0, strayAnswers: 0, lateAnswers: 0 },
    }
  }

  /** This peer's view of the cluster, itself included: [{ endpoint, state, incarnation, meta }]. */
  members () {
    return this.membership?.members() ?? []
  }

  /**
   * Graceful stop: the leave is announced to every member (shown as `left` at once), new
   * requests are answered DRAINING (the client goes elsewhere at once), in-flight requests
   * finish (up to drainTimeout), their replies leave, the sockets close.
   */
  stop () {
    if (this.stopping !== null) return this.stopping
    if (this.state === 'new') { this.state = 'stopped'; this.stopping = Promise.resolve(); return this.stopping }
    this.stopping = this.stopNow()
    return this.stopping
  }

  async stopNow () {
    await this.starting?.catch(() => {})
    this.state = 'stopping'
    this.memory?.stop()
    this.security.stop()
    const { clock, drainTimeout, logger } = this.options
    if (this.dispatcher !== null) logger.info({ inflight: this.dispatcher.inflight }, `draining: leaving the cluster, ${this.dispatcher.inflight} request${this.dispatcher.inflight === 1 ? '' : 's'} in flight`)
    const leaving = this.cluster?.leave()
    const durableDrained = this.dispatcher === null ? null : this.options.durable?.drain(drainTimeout) // takes no new durable event, gives back what it holds unstarted
    const drainEnd = clock.now() + drainTimeout
    if (this.dispatcher !== null) {
      await finishInFlight({ dispatcher: this.dispatcher, streams: this.streams, clock, drainTimeout, debug: this.debugging ? (fields, message) => logger.debug(fields, message) : null })
    }
    await durableDrained // its acks out, after the work in flight
    await this.publisher.close() // after the work in flight, which may have published
    await leaving
    await awaitQuiet(clock, () => this.counts.received, drainEnd)
    if (this.debugging) logger.debug({ received: this.counts.received }, `no request for ${QUIET_MS} ms (or the drain timeout): closing`)
    this.streams?.close()
    await this.pool?.stop()
    this.replies.flush() // replies still waiting for their turn to end
    await this.cluster?.close()
    await this.transport?.close()
    this.state = 'stopped'
    if (this.dispatcher !== null) logger.info({}, 'stopped')
  }
}

/** The bytes of a message of several frames. */
function frameBytes (frames) {
  let n = 0
  for (let i = 0; i < frames.length; i++) n += frames[i].length
  return n
}
