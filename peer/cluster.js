// This peer as a member of its cluster: the gossip transport to the other members
// (gossip-transport.js), SWIM membership (membership/swim.js), seeds found by DNS, and what
// the peer logs and tells of members, joins and seeds that do not answer.
import { GossipTransport } from './gossip-transport.js'
import { Membership } from './membership/swim.js'
import { peerCredentials } from '../transport/security.js'
import { dnsSeedsOf } from '../transport/dns-seeds.js'
import { isLoopback } from '../protocol/endpoint.js'
import { VERSION } from '../protocol/version.js'

const LIST_ROOM = 512 // bytes a SYNC or MEMBERS frame takes besides its claims (header, seq, from, digest)

export class PeerCluster {
  /**
   * @param {object} o
   * @param {object} o.options   the peer's resolved options
   * @param {string} o.endpoint  this peer's
   * @param {string} o.service   its service digest (service.js)
   * @param {((frame: Buffer) => Buffer)|null} o.seal  seals membership requests (a secured peer: security.js)
   * @param {import('./handshake-reports.js').HandshakeReports} o.reports
   * @param {boolean} o.debugging
   * @param {(event: string, payload: unknown) => void} o.tell  the peer's events
   * @param {(member: object) => void} o.onMember  a member changed state (the reply digest changes with it)
   */
  constructor (o) {
    const opts = o.options
    this.o = o
    const plain = opts.security === null // plain (not on purpose): loopback only
    this.gossip = new GossipTransport({
      connector: opts.transport.connector,
      clock: opts.clock,
      limits: opts,
      heartbeatInterval: opts.heartbeatInterval,
      heartbeatTimeout: opts.heartbeatTimeout,
      onDisconnect: (ep) => this.membership?.probeNow(ep),
      onLate: (ep, answer) => this.membership?.late(ep, answer),
      credentials: opts.security ? peerCredentials(opts.security) : null,
      seal: o.seal,
      onRefused: (ep, refusal) => o.reports.failed(ep, refusal),
      accept: plain ? isLoopback : null,
      maxConnections: opts.membership.maxConnections,
      idleMs: opts.membership.connectionIdleMs,
    })
    this.membership = new Membership({
      endpoint: o.endpoint,
      incarnation: opts.wallClock(), // a restarted peer starts above its earlier life
      wallClock: opts.wallClock,
      meta: { version: VERSION, ...opts.meta },
      service: o.service,
      seeds: opts.seeds,
      net: this.gossip,
      clock: opts.clock,
      random: opts.random,
      config: opts.membership,
      listBudget: opts.maxMessageSize - LIST_ROOM, // member lists always fit in one frame
      debug: o.debugging ? (fields, message) => opts.logger.debug(fields, message) : null,
      accept: plain ? isLoopback : null, // a plain peer holds and probes loopback members only
    })
    this.membership.on('member', (m) => this.onMember(m))
    this.membership.on('joined', ({ through }) => {
      opts.logger.info({ endpoint: o.endpoint, through }, `joined the cluster through ${through.join(', ')}`)
      o.tell('joined', { through })
    })
    this.membership.on('join-failed', (f) => this.onJoinFailed(f))
    this.dns = dnsSeedsOf(opts, (found) => this.onDnsSeeds(found)) // DnsSeeds, when seeds name DNS records
  }

  /** The first DNS answer (bounded by dns.timeout), then joining. */
  async start () {
    await this.dns?.start()
  }

  join () {
    this.membership.start()
  }

  onMember (m) {
    const { endpoint, options } = this.o
    if (m.endpoint !== endpoint) options.logger.info({ member: m.endpoint, state: m.state, incarnation: m.incarnation }, `member ${m.endpoint} ${m.state} (incarnation ${m.incarnation})`)
    if (m.endpoint !== endpoint && (m.state === 'dead' || m.state === 'left')) this.gossip.forget(m.endpoint)
    this.o.onMember(m)
  }

  /**
   * No seed answered a join attempt: the peer serves alone and tries again with backoff. Said
   * at the 1st, 2nd, 4th, 8th... failure and then every 12th (about once a minute), so a typo
   * in a seed is seen at once and a long outage does not flood the log.
   */
  onJoinFailed ({ seeds, attempts, retryIn }) {
    this.dns?.refresh() // the names may point elsewhere now
    this.o.tell('seeds-unreachable', { seeds, attempts, retryIn })
    if ((attempts & (attempts - 1)) !== 0 && attempts % 12 !== 0) return
    this.o.options.logger.warn({ seeds, attempts, retryInMs: retryIn }, `no seed reachable (${seeds.join(', ')}) after ${attempts} attempt${attempts === 1 ? '' : 's'}; serving alone, trying again in ${retryIn} ms`)
  }

  /**
   * The DNS seeds resolved to a new set: they are seeds as the static ones are. A plain peer
   * (no security option) takes only loopback endpoints from DNS, as it accepts only loopback
   * seeds.
   */
  onDnsSeeds (found) {
    const o = this.o.options
    const others = found.filter((ep) => ep !== this.o.endpoint)
    const usable = o.security !== null ? others : others.filter(isLoopback)
    if (usable.length < others.length) {
      o.logger.warn({ found }, 'DNS seeds outside loopback skipped: a plain peer talks only on loopback (give security, or security: false on purpose)')
    }
    o.logger.info({ seeds: usable }, `DNS seeds: ${usable.length === 0 ? 'none' : usable.join(', ')}`)
    this.membership.setSeeds([...o.seeds, ...usable])
  }

  /** Leaving: the leave announced to every member; resolves when it went out. */
  leave () {
    this.dns?.stop()
    return this.membership.leave()
  }

  close () {
    return this.gossip.close()
  }

  /** Peer.stats().membership */
  stats () {
    const m = this.membership
    const g = this.gossip.counts
    return {
      ...m.counts,
      refused: { ...m.counts.refused, endpoints: g.refusedEndpoints },
      candidatesHeld: m.candidates.size,
      gossipSent: g.sent,
      gossipBytes: g.bytes,
      strayAnswers: g.strayAnswers,
      lateAnswers: g.lateAnswers,
      connections: this.gossip.held.size,
      connectionsOpened: g.opened,
      connectionsClosed: g.closedIdle + g.closedOverBound,
      subjects: m.overlay.subjects().length,
      queueDepth: m.queue.size,
      localHealth: m.awareness.score,
      probeRttMs: m.roundTrips.summary(),
    }
  }
}
