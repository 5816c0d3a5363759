// Calls waiting for a peer's capacity. A peer that answers BUSY did not take the work, so a
// call refused busy by every peer that may take it is not a failure while its deadline
// allows: it waits here, in arrival order, and goes to the first peer that has room. It costs
// the peers nothing while it waits.
//
// How room is known, without a blind retry loop (each refusal costs the peer work):
//  - a peer that said BUSY is marked busy; new calls go to the peers not marked, and wait
//    here when every peer that may take them is marked;
//  - a busy peer that finishes one of this client's calls (a reply, a stream's end) has just
//    freed a place: the first waiting call it may take goes there, at once (freed);
//  - a busy peer that runs no request of this client's (its load is other clients', or
//    this client's long streams) gets one waiting call as a probe now and then: first after
//    PROBE_MIN_MS, doubling to PROBE_MAX_MS while the probes are refused, back to the start
//    once a place frees;
//  - a busy peer that runs this client's calls gets one more as a probe every GROW_MS: its
//    places may have grown since it refused (a peer's queue is bounded by the time of its
//    work, which shrinks as its requests get quicker), and this client only ever refills the
//    places it holds. Such a probe that ran shows a place beyond them: its answer sends two
//    waiting calls, the second a probe again, so the calls held there grow by one a round
//    trip until a probe is refused (the refused one waits again, in its turn);
//  - a peer that comes up or starts serving the method takes the waiting calls through the
//    client's dispatch (routesChanged), as parked calls do: how a fresh client spreads its
//    first burst over the peers it learns within milliseconds.
//
// Calls wait earliest deadline first (add): with one timeout, in the order they were made, and
// a call that comes back (its peer died holding it) ahead of the calls made since.
//
// A waiting call fails with BusyError (retryable) as soon as it cannot start before its
// deadline, judged from the rate at which places have freed since the wait began, counted
// over the time some peer was up (an outage says nothing of the peers' rate, and how long it
// lasts is not known: calls then wait for their deadlines), and at the latest at its deadline
// (its own timer). A peer may refuse busy for bytes too (its
// maxInflightBytes); the wait is the same.
//
// Items are calls of every kind (client/call.js). Their owner, the call lifecycle
// (client/calls.js: serve()), says whether a peer may take one (fits), picks a peer not marked
// busy for it (pick: the call path's, call-path.js), hands it to a peer, and fails it (fail, or
// expire when it cannot start in time).

const PROBE_MIN_MS = 10 //    a busy peer running nothing of ours is probed after this long...
const PROBE_MAX_MS = 1000 //  ...doubling while it refuses, up to this
const GROW_MS = 1000 //       a busy peer running calls of ours is probed for more places this often
const SWEEP_MS = 50 //        waiting calls are checked against their deadlines this often
const RATE_MIN_MS = 250 //    the drain rate is trusted after this long of waiting...
const RATE_MIN_FREED = 8 //   ...and this many places freed
const RATE_SLACK = 1.25 //    a call fails early only when even 1.25x the measured rate would start it too late
const SCAN = 64 //            waiting calls looked at for one freed place (calls for other methods are passed over)
const INSERT_SCAN = 1024 //   places a new waiting call looks back for its deadline's (bounded: calls of mixed timeouts)

export class CapacityWait {
  /**
   * @param {object} o
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => Iterable<object>} o.peers  the peer entries (client/peer-table.js) known now
   */
  constructor (o) {
    this.clock = o.clock
    this.peers = o.peers
    this.head = null
    this.tail = null
    this.size = 0
    this.timer = null
    this.timerAt = Infinity
    this.since = 0 //  when the queue last became non-empty
    this.freedCount = 0 // places freed since then (the drain rate)...
    this.servingMs = 0 // ...over this much of the time since, in which some peer was up (as seen at each sweep)
    this.upAtSweep = true // whether some peer was up at the last sweep
    this.lastSweep = 0
    this.owner = null // serve()
    this.counts = { waited: 0, expired: 0, probes: 0 }
  }

  /**
   * What the waiting items' owner does with them.
   * @param {{ fits(item, peer): boolean, pick(item): { peer }|{ error }|null, hand(item, peer): void, fail(item, err): void, expire(item, message: string): void }} owner
   */
  serve (owner) {
    this.owner = owner
  }

  /**
   * `item` was refused busy by every peer its `owner` may send it to: it waits, in deadline
   * order: after every waiting item due no later than it (looking back at most INSERT_SCAN
   * places). So a call handed back by a peer that died holding it, or one that waited before
   * (handed to a peer that another client's work filled first), goes ahead of the calls made
   * since, and calls of one timeout wait in arrival order. Returns false when it cannot start
   * before its deadline, by the drain rate measured (the caller fails it busy).
   * @param {{ deadline: number }} item
   */
  add (item) {
    const now = this.clock.now()
    // One that waited before keeps its turn among calls due at the same instant (made in the
    // same millisecond): it goes before them, a new one after them.
    const again = item.waited === true
    let before = this.tail // the node it goes after (null: at the head)
    let position = this.size
    for (let i = 0; before !== null && (before.item.deadline > item.deadline || (again && before.item.deadline === item.deadline)) && i < INSERT_SCAN; i++) {
      before = before.prev
      position--
    }
    if (this.tooLate(position, item.deadline, now)) return false
    const node = { item, prev: before, next: before === null ? this.head : before.next }
    item.waiting = node
    if (!again) this.counts.waited++
    item.waited = true
    if (this.size === 0) { this.since = now; this.freedCount = 0; this.servingMs = 0; this.upAtSweep = this.anyUp(); this.lastSweep = now }
    if (node.next !== null) node.next.prev = node; else this.tail = node
    if (before !== null) before.next = node; else this.head = node
    this.size++
    if (this.timer === null) this.arm(now) // else the timer is set, and re-armed when it fires
    return true
  }

  /** Takes `item` out of the queue (it settled, or goes to a peer); false when it was not waiting. */
  delete (item) {
    const node = item.waiting
    if (node === undefined || node === null) return false
    item.waiting = null
    if (node.prev !== null) node.prev.next = node.next; else this.head = node.next
    if (node.next !== null) node.next.prev = node.prev; else this.tail = node.prev
    node.prev = node.next = null
    this.size--
    if (this.size === 0) this.disarm()
    return true
  }

  /** `peer` refused an item busy: it takes no new work until a place frees or a probe gets in. */
  saturated (peer, wasProbe) {
    const now = this.clock.now()
    peer.growing = false // a refusal ends a search for more places
    if (!peer.busy) {
      peer.busy = true
      peer.probeMs = PROBE_MIN_MS
      peer.growAt = now + GROW_MS
    } else if (wasProbe) {
      peer.probeMs = Math.min(PROBE_MAX_MS, peer.probeMs * 2)
    }
    peer.probeAt = now + peer.probeMs
    if (this.size > 0) this.armAt(now, peer.probeAt)
  }

  /**
   * `peer` finished one of this client's calls: a place is free there. The first waiting item
   * it may take goes to it, and when the call was a probe for more places (it found one beyond
   * those this client held) the next one too, as a probe; with none, the peer is no longer
   * marked busy.
   */
  freed (peer, wasProbe = false) {
    if (!peer.busy) return
    peer.probeMs = PROBE_MIN_MS
    peer.probeAt = this.clock.now() + PROBE_MIN_MS
    if (this.size > 0) {
      this.freedCount++
      if (this.handOne(peer, false)) {
        if (wasProbe && peer.growing && this.size > 0) this.handOne(peer, true)
        return
      }
    }
    peer.busy = false
  }

  /**
   * Peers changed (one came up, or serves the method now): each waiting item that some peer
   * not marked busy may take goes there now, in deadline order (its owner picks the peer).
   */
  routesChanged () {
    if (this.size === 0) return
    let open = false
    for (const p of this.peers()) if (!p.busy && p.state === 'up') { open = true; break }
    if (!open) return
    for (let n = this.head; n !== null;) {
      const next = n.next
      const d = this.owner.pick(n.item)
      if (d !== null) {
        const { item } = n
        const owner = this.owner
        this.delete(item)
        item.probe = null
        if (d.error !== undefined) owner.fail(item, d.error)
        else owner.hand(item, d.peer)
      }
      n = next
    }
  }

  /** Hands the first item `peer` may take (among the first SCAN) to it; false when none. */
  handOne (peer, probe) {
    let n = this.head
    for (let i = 0; n !== null && i < SCAN; i++, n = n.next) {
      if (!this.owner.fits(n.item, peer)) continue
      const { item } = n
      this.delete(item)
      if (probe) { this.counts.probes++; item.probe = peer } else item.probe = null
      this.owner.hand(item, peer)
      return true
    }
    return false
  }

  /** Whether an item at `position` cannot start before `deadline`, at the rate places have freed (false until that rate is known). */
  tooLate (position, deadline, now) {
    if (deadline === Infinity || this.size === 0) return false
    const span = this.servingMs + (this.upAtSweep ? now - this.lastSweep : 0)
    if (span < RATE_MIN_MS || this.freedCount < RATE_MIN_FREED) return false
    const perMs = (this.freedCount / span) * RATE_SLACK
    return now + (position + 1) / perMs > deadline
  }

  /** Sets the timer for the next sweep or probe (for a place, or for more), whichever comes first (every peer looked at: when the timer fires, or none is set). */
  arm (now) {
    let at = this.lastSweep + SWEEP_MS
    for (const p of this.peers()) {
      if (!p.busy) continue
      const next = p.calls.size > 0 ? p.growAt : p.probeAt // for more places, or for one
      if (next < at) at = next
    }
    this.armAt(now, at)
  }

  /** Brings the timer forward to `at` when it is set later (or not at all). */
  armAt (now, at) {
    if (at >= this.timerAt) return
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timerAt = at
    this.timer = this.clock.setTimeout(() => this.onTimer(), Math.max(0, at - now))
  }

  disarm () {
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timer = null
    this.timerAt = Infinity
  }

  onTimer () {
    this.timer = null
    this.timerAt = Infinity
    const now = this.clock.now()
    if (now - this.lastSweep >= SWEEP_MS) this.sweep(now)
    for (const p of this.peers()) {
      if (this.size === 0) break
      if (!p.busy) continue
      if (p.calls.size > 0) {
        // Calls of ours run there: their answers free places (freed). Now and then one more
        // goes, for places the peer may have gained.
        if (now >= p.growAt) { p.growAt = now + GROW_MS; p.growing = true; this.handOne(p, true) }
        continue
      }
      if (p.probeAt > now) continue
      p.probeAt = now + p.probeMs // until it answers: a refusal doubles the wait, a place freed resets it
      if (!this.handOne(p, true)) p.busy = false // it may take none of what waits: nothing to learn
    }
    if (this.size > 0) this.arm(now)
  }

  /** Whether some peer is up (the time the drain rate is counted over). */
  anyUp () {
    for (const p of this.peers()) if (p.state === 'up') return true
    return false
  }

  /** Fails the waiting items that cannot start before their deadlines at the rate places free. */
  sweep (now) {
    if (this.upAtSweep) this.servingMs += now - this.lastSweep
    this.upAtSweep = this.anyUp()
    this.lastSweep = now
    let position = 0
    for (let n = this.head; n !== null;) {
      const next = n.next
      if (!this.tooLate(position, n.item.deadline, now)) {
        position++
      } else {
        const { item } = n
        this.delete(item)
        this.counts.expired++
        this.owner.expire(item, `${position} calls wait ahead of it for the peers' capacity, which frees about ${Math.round(this.freedCount / (Math.max(1, this.servingMs) / 1000))} places a second while a peer is up`)
      }
      n = next
    }
  }

  /** Takes every waiting item out (the client closes: their owners fail them). */
  clear () {
    const items = []
    for (let n = this.head; n !== null; n = n.next) items.push(n.item)
    for (const item of items) this.delete(item)
    return items
  }
}
