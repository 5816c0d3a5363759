// The client's view of the peers it knows: state (up, down, draining), requests in flight,
// latency and failures. Changes are reported through `onChange(snapshot)`.
import { readContracts } from '../protocol/contracts.js'
import { PeakEwma } from './peak-ewma.js'

const LATENCY_DECAY_MS = 2000 // a peer's latency estimate forgets a slow spell over about this long...
const LATENCY_STALE_MS = 500 // ...and one with no sample for this long is tried again and replaced...
const LATENCY_STALE_SAMPLES = 16 // ...or while this many answers came from the other peers: serial traffic spreads (peak-ewma.js)

/**
 * The calls whose current attempt is on one peer, as a list linked through the calls
 * themselves (a call is on one peer at a time): adding and removing allocate nothing, where a
 * Set's table would be rebuilt again and again under steady traffic.
 */
export class CallList {
  constructor () {
    this.head = null
    this.size = 0
  }

  add (call) {
    call.listPrev = null
    call.listNext = this.head
    if (this.head !== null) this.head.listPrev = call
    this.head = call
    this.size++
  }

  /** Removes `call`, which must be in this list or in none; false when it was in none. */
  delete (call) {
    if (call.listPrev !== null) call.listPrev.listNext = call.listNext
    else if (this.head === call) this.head = call.listNext
    else return false
    if (call.listNext !== null) call.listNext.listPrev = call.listPrev
    call.listPrev = call.listNext = null
    this.size--
    return true
  }

  * [Symbol.iterator] () {
    for (let c = this.head; c !== null; c = c.listNext) yield c
  }
}

export class PeerEntry {
  /** @param {{ n: number }} samples  latency samples taken of every peer of the table (peak-ewma.js) */
  constructor (endpoint, order, now, samples) {
    this.endpoint = endpoint
    this.alone = Object.freeze([endpoint]) // the list of just this peer a call's first attempt here shares (call.js sentTo)
    this.order = order // position in the order peers were learned; lists keep this order
    this.state = 'down' // down until its handshake completes
    this.calls = new CallList() // calls whose current attempt is on this peer (requests: its outstanding load)...
    this.open = new CallList() //  ...and the streams open on it (client/calls.js: a kind's `long`)
    this.now = now
    this.latency = new PeakEwma(LATENCY_DECAY_MS, LATENCY_STALE_MS, samples, LATENCY_STALE_SAMPLES) // the one estimate: p2c balances on it, peers() shows it
    this.failures = 0 // consecutive
    this.lastError = null
    this.everUp = false
    this.gone = false // the cluster says it left or died: drop it once its connection closes
    this.listedGone = false // draining because a member list said so (not the peer itself): undone when listed alive
    this.claim = null // { incarnation, state } of the newest member-list claim about it
    this.connected = false // its connection is up (handshake done, no disconnect since)
    this.proving = false // a secured connection whose key proof is not on its way yet: not up (connections.js)
    this.refusal = null // HandshakeError: the peer refused this client's handshake, since its last success
    this.handshakeFailures = 0 // in a row
    this.redialedAt = -Infinity // when the client last dialled it anew (Client.redial)
    this.heardAt = -Infinity // when its last answer frame came (client/calls.js: a call's attempt limit is renewed while it answers others)
    this.load = 0 //     requests in flight on the peer, all clients together, as it last reported...
    this.loadAt = -Infinity // ...at this time (the client's clock)
    this.service = null // what it serves, by its own word (services.js): a descriptor, ANY, or null (not known yet)
    this.features = 0 // what it said it takes beyond requests: Feature bits of its SERVICE answer (protocol/constants.js)
    this.notServed = null // Set of methods it answered UNKNOWN_METHOD for since its last word on what it serves
    this.hint = null //  the service digest the newest claim about it carries (a prompt to ask it again), or null
    this.busy = false //  it answered BUSY and no place has freed since: new calls wait (capacity.js)
    this.probeMs = 0 //   while busy and running nothing of ours, probed this often...
    this.probeAt = 0 //   ...next at this time
    this.growAt = 0 //    while busy and running calls of ours: when one more goes as a probe, for places it gained...
    this.growing = false // ...and whether that search goes on (until a refusal)
    this.retiring = false // left out of the subset: takes no new calls, dropped once its calls are done
    this.downCheck = null // the timer of the next question to it while it is reported down (Client.checkDown)
    // Outlier ejection (ejection.js):
    this.streak = 0 //       attempts failed in a row
    this.ejections = 0 //    times ejected, each ejection longer
    this.ejectTimer = null // ends the current ejection
  }

  /** Whether no call of this client is on it. */
  get idle () {
    return this.calls.size === 0 && this.open.size === 0
  }

  /** The latency estimate now (ms), null before the first answer. */
  get latencyMs () {
    return this.latency.read(this.now())
  }

  snapshot () {
    return {
      endpoint: this.endpoint,
      state: this.state,
      inflight: this.calls.size,
      latencyMs: this.latencyMs,
      failures: this.failures,
      lastError: this.lastError,
      service: this.service === null ? null : this.service.any === true ? 'any' : { methods: [...this.service.methods], version: this.service.version, labels: { ...this.service.labels }, capacity: this.service.capacity, contracts: readContracts(this.service.contracts) ?? [], events: (this.service.events ?? []).map(([event, group]) => ({ event, group })), streams: [...(this.service.streams ?? [])] },
    }
  }
}

export class PeerTable {
  /**
   * @param {(snapshot: object) => void} onChange
   * @param {() => number} now  the client's clock, ms
   */
  constructor (onChange, now) {
    this.now = now
    this.entries = new Map()
    this.nextOrder = 0
    this.samples = { n: 0 } // latency samples taken of every peer (peak-ewma.js)
    this.onChange = onChange
    this.upList = [] // cached list of entries in state up, rebuilt on every change
    this.gen = 0 //    bumped by every change that can change which peers take a call (routing.js caches by it)
  }

  /** Something about a peer changed which calls it takes (what it serves, what it refused): cached routes are stale. */
  changed () {
    this.gen++
  }

  add (endpoint) {
    let e = this.entries.get(endpoint)
    if (e === undefined) {
      e = new PeerEntry(endpoint, this.nextOrder++, this.now, this.samples)
      this.entries.set(endpoint, e)
      this.gen++
      this.onChange(e.snapshot())
    }
    return e
  }

  get (endpoint) {
    return this.entries.get(endpoint)
  }

  /** Forgets a peer (it left the cluster). */
  remove (e) {
    if (this.entries.get(e.endpoint) !== e) return
    this.entries.delete(e.endpoint)
    this.upList = this.upList.filter((x) => x !== e)
    e.state = 'down'
    this.gen++
    this.onChange({ ...e.snapshot(), removed: true })
  }

  setState (e, state, reason = null) {
    if (state === 'up') e.everUp = true
    if (reason !== null) e.lastError = reason
    if (e.state === state) return false
    e.state = state
    this.upList = [...this.entries.values()].filter((x) => x.state === 'up')
    this.gen++
    this.onChange(e.snapshot())
    return true
  }

  /** Peers in state up. */
  up () {
    return this.upList
  }

  anyEverUp () {
    for (const e of this.entries.values()) if (e.everUp) return true
    return false
  }

  /** An attempt on `e` got an answer after `latencyMs`, at time `now`. */
  recordSuccess (e, latencyMs, now) {
    e.failures = 0
    e.latency.add(latencyMs, now)
  }

  /** An attempt on `e` failed; `latencyMs`, when given, is how long it waited (a timeout). */
  recordFailure (e, reason, latencyMs, now) {
    if (latencyMs !== undefined) e.latency.add(latencyMs, now)
    e.failures++
    e.lastError = reason
  }

  snapshot () {
    return [...this.entries.values()].map((e) => e.snapshot())
  }
}
