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
  /** @param {import('./client.js').Client} client */
  constructor (client) {
    this.c = client
    this.subsetQueued = false
    this.dnsFound = new Set() // endpoints the DNS seeds gave last
  }

  /**
   * The DNS seeds resolved to a new set. Each endpoint is a seed (kept as the way back in)
   * while DNS names it; one DNS no longer names goes back to being an ordinary peer, dropped
   * when it is down. A plain client (no security option) takes only loopback endpoints.
   */
  onDnsSeeds (found) {
    if (this.c.closing !== null) return
    const usable = new Set(found.filter((ep) => endpointAllowed(ep, this.c.options.security !== null)))
    for (const ep of this.dnsFound) {
      if (usable.has(ep) || this.c.options.seeds.includes(ep)) continue
      this.c.seeds.delete(ep)
      const peer = this.c.table.get(ep)
      if (peer !== undefined && peer.state === 'down') this.c.connections.remove(peer)
    }
    for (const ep of usable) {
      this.c.seeds.add(ep)
      if (this.c.table.get(ep) === undefined && this.c.table.entries.size < this.c.options.maxPeers) this.c.connections.add(ep)
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
    if (this.c.closing !== null) return
    const outside = this.c.roster.outside() // connected peers no list named (seeds): they count toward maxPeers too
    const now = this.c.clock.now()
    this.c.roster.reap(now)
    const horizon = incarnationHorizon(this.c.options.wallClock())
    const secured = this.c.options.security !== null
    for (const listed of members) {
      // A plain client stays on loopback, whoever names the endpoint (README, Security).
      if (!endpointAllowed(listed.endpoint, secured)) { this.c.counts.offLoopback++; continue }
      // As peers do: no claim can push a member beyond the reach of its own refutation.
      if (beyondHorizon(listed, horizon)) { this.c.counts.beyondHorizon++; continue }
      const m = authored(listed, from)
      const alive = m.state === MemberState.ALIVE || m.state === MemberState.SUSPECT
      const known = this.c.table.get(m.endpoint)
      if (known === undefined) {
        // A member not connected: remembered, for the subset to choose from.
        if (!this.c.roster.offer(m, outside, now)) this.c.counts.peersRefused++
        continue
      }
      if (known.claim !== null && !isNews(known.claim, m)) continue
      const newLife = known.claim !== null && m.incarnation > known.claim.incarnation && m.state === MemberState.ALIVE
      known.claim = { incarnation: m.incarnation, state: m.state }
      if (newLife && !known.connected) this.redial(known)
      this.hinted(known, m.service ?? null)
      this.c.roster.record(m, known.hint, now)
      if (alive) {
        this.relisted(known)
      } else {
        if (!this.c.seeds.has(m.endpoint)) {
          known.gone = true
          if (known.state === 'up') this.c.liveness.verifyGone(known, stateName(m.state)) // asks the peer itself first
          else if (known.state === 'down') this.c.connections.remove(known)
        }
      }
    }
    this.resubset() // and the calls waiting for a first list, or for a peer that may serve them, look again
  }

  /**
   * A peer whose connection is down is alive again by the lists (restarted, or back from a
   * partition): dial it now instead of waiting for ZeroMQ's reconnect backoff (up to 2 s), so
   * a rolling restart's next step does not find this client with one peer fewer than the
   * cluster has. At most once per REDIAL_MIN_MS per peer.
   */
  redial (peer) {
    const now = this.c.clock.now()
    if (now - peer.redialedAt < REDIAL_MIN_MS) return
    peer.redialedAt = now
    this.c.counts.redials++
    this.c.transport.disconnect(peer.endpoint)
    this.c.transport.connect(peer.endpoint)
  }

  /** The subset is chosen again at the end of this turn (once, however often this is called). */
  queueResubset () {
    if (this.subsetQueued || this.c.closing !== null) return
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
    if (this.c.closing !== null) return
    const alive = this.c.roster.alive()
    if (alive.length === 0) return this.c.routesChanged()
    const want = this.c.roster.choose(alive)
    for (const ep of want) {
      const peer = this.c.table.get(ep)
      if (peer !== undefined) { if (peer.retiring) this.unretire(peer); continue }
      const m = this.c.roster.get(ep)
      const added = this.c.connections.add(ep)
      if (added !== undefined) { added.claim = { incarnation: m.incarnation, state: m.state }; added.hint = m.service }
    }
    if (this.c.roster.limited(alive.length)) {
      for (const peer of [...this.c.table.entries.values()]) if (!want.has(peer.endpoint) && !peer.retiring) this.retire(peer)
    }
    this.c.routesChanged() // calls waiting for a first list, or for a peer that may serve them
  }

  /** A connected peer left out of the subset: no new calls; dropped once the calls on it are done. */
  retire (peer) {
    peer.retiring = true
    if (peer.calls.size === 0) return this.c.connections.remove(peer)
    this.c.table.setState(peer, 'draining', 'left out of the subset')
  }

  unretire (peer) {
    peer.retiring = false
    if (peer.state === 'draining' && peer.connected && !peer.listedGone) this.c.table.setState(peer, 'up', 'back in the subset')
  }

  /** Every peer of the subset is down: the seeds are dialled again, as the way back in. */
  restoreSeeds () {
    for (const ep of this.c.seeds) {
      if (this.c.table.get(ep) !== undefined) continue
      const peer = this.c.connections.add(ep)
      if (peer !== undefined) peer.hint = this.c.roster.get(ep)?.service ?? null
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
    if (peer.connected && peer.service?.digest !== digest) this.c.services.ask(peer.endpoint)
  }

  /** A member list shows `peer` alive. */
  relisted (peer) {
    peer.gone = false
    if (!peer.listedGone) return
    peer.listedGone = false
    if (peer.state === 'draining' && peer.connected) this.c.connections.up(peer.endpoint, 'alive again')
  }
}
