// What a client does with member lists and DNS seeds: takes claims in by the rule members use,
// connects the subset of the members (subset.js, roster.js) and lets go of the others once
// their calls are done, dials a peer alive again at once, and keeps the seeds as the way back
// in when every peer is gone. Split from client.js; it works on the client's peer table.
import { MemberState, memberStateNames } from '../protocol/constants.js'
import { incarnationHorizon, beyondHorizon, authored, isNews, endpointAllowed } from '../protocol/claims.js'

const REDIAL_MIN_MS = 500 // a peer alive again by the lists is dialled at once, at most this often

function stateName (n) {
  return memberStateNames[n] ?? 'unknown'
}

export class MemberLists {
  /**
   * @param {object} o
   * @param {import('./peer-table.js').PeerTable} o.table   the connected peers
   * @param {import('./roster.js').Roster} o.roster          the members known
   * @param {Set<string>} o.seeds         the way back in: the seeds given, and those DNS names now
   * @param {string[]} o.givenSeeds       the endpoints the client was given (kept whatever DNS says)
   * @param {boolean} o.anyHost           it may connect off loopback (CURVE, or plain on purpose); else loopback only
   * @param {number} o.maxPeers
   * @param {{ now(): number }} o.clock
   * @param {() => number} o.wallClock    ms since 1970, for the incarnation horizon
   * @param {object} o.counts             the client's counters
   * @param {{ connect(ep), disconnect(ep) }} o.transport
   * @param {{ add(ep), remove(peer), up(ep, reason) }} o.connections
   * @param {{ verifyGone(peer, state: string): void }} o.liveness
   * @param {{ ask(ep): void }} o.services
   * @param {() => void} o.routesChanged
   * @param {() => boolean} o.closed
   */
  constructor (o) {
    this.o = o
    this.subsetQueued = false
    this.dnsFound = new Set() // endpoints the DNS seeds gave last
  }

  /**
   * The DNS seeds resolved to a new set. Each endpoint is a seed (kept as the way back in)
   * while DNS names it; one DNS no longer names goes back to being an ordinary peer, dropped
   * when it is down. A plain client (no security option) takes only loopback endpoints.
   */
  onDnsSeeds (found) {
    if (this.o.closed()) return
    const usable = new Set(found.filter((ep) => endpointAllowed(ep, this.o.anyHost)))
    for (const ep of this.dnsFound) {
      if (usable.has(ep) || this.o.givenSeeds.includes(ep)) continue
      this.o.seeds.delete(ep)
      const peer = this.o.table.get(ep)
      if (peer !== undefined && peer.state === 'down') this.o.connections.remove(peer)
    }
    for (const ep of usable) {
      this.o.seeds.add(ep)
      if (this.o.table.get(ep) === undefined && this.o.table.entries.size < this.o.maxPeers) this.o.connections.add(ep)
    }
    this.dnsFound = usable
  }

  /**
   * Takes in a member list: alive and suspect members are connected and used; dead and left
   * ones stop getting new requests and are dropped once their connection closes. A claim
   * counts only when it is newer than what the client holds for that peer, by the rule
   * members use (a higher incarnation, or at the same one a graver state), so lists from
   * peers that disagree for a while do not flip a peer back and forth. A peer the lists
   * showed gone and now show alive again (it refuted a false death) is back in rotation at
   * once if its connection is up. Seeds are kept whatever the list says, as the way back in
   * when every known peer is gone. At most `maxPeers` peers are kept. Claims pass the rules
   * every receiver applies (protocol/claims.js); `from` is the peer that gave the list (a
   * `left` it relays about another member reads as `dead`).
   */
  learn (members, from) {
    if (this.o.closed()) return
    const outside = this.o.roster.outside() // connected peers no list named (seeds): they count toward maxPeers too
    const now = this.o.clock.now()
    this.o.roster.reap(now)
    const horizon = incarnationHorizon(this.o.wallClock())
    const anyHost = this.o.anyHost
    for (const listed of members) {
      // A plain client stays on loopback, whoever names the endpoint (docs/guides/security.md).
      if (!endpointAllowed(listed.endpoint, anyHost)) { this.o.counts.offLoopback++; continue }
      // As peers do: no claim can push a member beyond the reach of its own refutation.
      if (beyondHorizon(listed, horizon)) { this.o.counts.beyondHorizon++; continue }
      const m = authored(listed, from)
      const alive = m.state === MemberState.ALIVE || m.state === MemberState.SUSPECT
      const known = this.o.table.get(m.endpoint)
      if (known === undefined) {
        // A member not connected: remembered, for the subset to choose from.
        if (!this.o.roster.offer(m, outside, now)) this.o.counts.peersRefused++
        continue
      }
      if (known.claim !== null && !isNews(known.claim, m)) continue
      const newLife = known.claim !== null && m.incarnation > known.claim.incarnation && m.state === MemberState.ALIVE
      known.claim = { incarnation: m.incarnation, state: m.state }
      if (newLife && !known.connected) this.redial(known)
      this.hinted(known, m.service ?? null)
      this.o.roster.record(m, known.hint, now)
      if (alive) {
        this.relisted(known)
      } else {
        if (!this.o.seeds.has(m.endpoint)) {
          known.gone = true
          if (known.state === 'up') this.o.liveness.verifyGone(known, stateName(m.state)) // asks the peer itself first
          else if (known.state === 'down') this.o.connections.remove(known)
        }
      }
    }
    this.resubset() // and the calls waiting for a first list, or for a peer that may serve them, look again
  }

  /**
   * A peer whose connection is down is alive again by the lists (restarted, or back from a
   * partition): dial it now instead of waiting for ZeroMQ's reconnect backoff (up to 250 ms), so
   * a rolling restart's next step does not find this client with one peer fewer than the
   * cluster has. At most once per REDIAL_MIN_MS per peer.
   */
  redial (peer) {
    const now = this.o.clock.now()
    if (now - peer.redialedAt < REDIAL_MIN_MS) return
    peer.redialedAt = now
    this.o.counts.redials++
    this.o.transport.disconnect(peer.endpoint)
    this.o.transport.connect(peer.endpoint)
  }

  /** The subset is chosen again at the end of this turn (once, however often this is called). */
  queueResubset () {
    if (this.subsetQueued || this.o.closed()) return
    this.subsetQueued = true
    setImmediate(() => this.resubset())
  }

  /**
   * Connects the subset of the members (subset.js) and lets go of connected peers outside it
   * once their calls are done. Subsetting is at work only when there are more members than
   * `subset`; below that every member is connected and the seeds are kept, as before.
   */
  resubset () {
    this.subsetQueued = false
    if (this.o.closed()) return
    const alive = this.o.roster.alive()
    if (alive.length === 0) return this.o.routesChanged()
    const want = this.o.roster.choose(alive)
    for (const ep of want) {
      const peer = this.o.table.get(ep)
      if (peer !== undefined) { if (peer.retiring) this.unretire(peer); continue }
      const m = this.o.roster.get(ep)
      const added = this.o.connections.add(ep)
      if (added !== undefined) { added.claim = { incarnation: m.incarnation, state: m.state }; added.hint = m.service }
    }
    if (this.o.roster.limited(alive.length)) {
      for (const peer of [...this.o.table.entries.values()]) if (!want.has(peer.endpoint) && !peer.retiring) this.retire(peer)
    }
    this.o.routesChanged() // calls waiting for a first list, or for a peer that may serve them
  }

  /** A connected peer left out of the subset: no new calls; dropped once the calls on it are done. */
  retire (peer) {
    peer.retiring = true
    if (peer.idle) return this.o.connections.remove(peer)
    this.o.table.setState(peer, 'draining', 'left out of the subset')
  }

  unretire (peer) {
    peer.retiring = false
    if (peer.state === 'draining' && peer.connected && !peer.listedGone) this.o.table.setState(peer, 'up', 'back in the subset')
  }

  /** Every peer of the subset is down: the seeds are dialled again, as the way back in. */
  restoreSeeds () {
    for (const ep of this.o.seeds) {
      if (this.o.table.get(ep) !== undefined) continue
      const peer = this.o.connections.add(ep)
      if (peer !== undefined) peer.hint = this.o.roster.get(ep)?.service ?? null
    }
  }

  /**
   * A claim about `peer` carries service digest `digest`: when it is not the digest of what
   * the peer last said it serves, the peer is asked again (on its own connection). The claim
   * itself never changes where requests go.
   */
  hinted (peer, digest) {
    if (digest === null || digest === peer.hint) return
    peer.hint = digest
    if (peer.connected && peer.service?.digest !== digest) this.o.services.ask(peer.endpoint)
  }

  /** A member list shows `peer` alive. */
  relisted (peer) {
    peer.gone = false
    if (!peer.listedGone) return
    peer.listedGone = false
    if (peer.state === 'draining' && peer.connected) this.o.connections.up(peer.endpoint, 'alive again')
  }
}
