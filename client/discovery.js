// How a client learns peers without being a member: every reply carries the peer's
// membership digest. When it differs both from the digest of the last member list the client
// took in and from the digest of the last list that same peer gave, that peer's view changed
// since: the client fetches its list (one fetch at a time, at most every MIN_GAP_MS). Peers
// that disagree for a while each give their list once, not once per reply. The client also
// refreshes from a random up peer every `refreshInterval`, and sooner while it is young
// (after 250 ms, 500 ms, 1 s, ... doubling up to refreshInterval): a client started with the
// cluster learns the peers that joined just after its first list without sending a request.
import { encodeMembersGet } from '../protocol/codec.js'

const MIN_GAP_MS = 50 // between two fetches prompted by replies
const FIRST_REFRESH_MS = 250 // the first periodic refresh; the pause doubles up to refreshInterval

export class Discovery {
  /**
   * @param {object} o
   * @param {import('../transport/questions.js').Questions} o.questions  the client's: a list is an answer to its MEMBERS_GET
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {() => number} o.random
   * @param {number} o.timeout            wait for a member list
   * @param {number} o.refreshInterval    0: no periodic refresh
   * @param {() => Array<{ endpoint: string }>} o.upPeers
   * @param {(list: { version: number, members: object[] }, from: string) => void} o.onList
   */
  constructor (o) {
    this.o = o
    this.known = null // digest of the last list taken in
    this.gave = new Map() // endpoint -> digest of the last list that peer gave
    this.busy = false
    this.last = -Infinity
    this.timer = null
    this.pause = Math.min(FIRST_REFRESH_MS, o.refreshInterval) // until the next periodic refresh
    this.counts = { fetches: 0, lists: 0 }
  }

  start () {
    if (this.o.refreshInterval > 0) this.schedule()
  }

  schedule () {
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null
      const up = this.o.upPeers()
      if (up.length > 0) this.refresh(up[Math.floor(this.o.random() * up.length)].endpoint, true)
      this.schedule()
    }, this.pause)
    this.pause = Math.min(this.o.refreshInterval, this.pause * 2)
    this.timer?.unref?.() // a forgotten client must not keep the process alive for this
  }

  /** A peer's connection came up: the first one tells the client who else there is. */
  peerUp (endpoint) {
    if (this.known === null && !this.busy) this.refresh(endpoint, false)
  }

  /** A reply from `endpoint` carried membership digest `mv`. */
  seen (endpoint, mv) {
    if (typeof mv !== 'number' || mv === this.known || mv === this.gave.get(endpoint)) return
    if (this.o.clock.now() - this.last < MIN_GAP_MS) return
    this.refresh(endpoint, false)
  }

  async refresh (endpoint, periodic) {
    if (this.busy) return
    this.busy = true
    this.last = this.o.clock.now()
    try {
      const list = await this.fetch(endpoint)
      if (list === null) return
      this.gave.set(endpoint, list.version)
      if (!periodic && list.version === this.known) return
      this.known = list.version
      this.counts.lists++
      this.o.onList(list, endpoint)
    } finally {
      this.busy = false
    }
  }

  /** A peer was dropped: what it gave is forgotten. */
  forget (endpoint) {
    this.gave.delete(endpoint)
  }

  /** Asks `endpoint` for its member list; resolves with { version, members } or null. */
  fetch (endpoint) {
    this.counts.fetches++
    return new Promise((resolve) => {
      this.o.questions.ask(endpoint, encodeMembersGet, this.o.timeout, (msg) => resolve(msg === null ? null : { version: msg.membersVersion, members: msg.members }))
    })
  }

  /** A MEMBERS message arrived from `endpoint`: the answer to the fetch it was asked (only it may answer). */
  onMembers (endpoint, msg) {
    this.o.questions.answer(endpoint, msg.seq, msg)
  }

  /** Stops the refreshes; a fetch out ends with the client's questions (Questions.stop). */
  stop () {
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer)
    this.timer = null
  }
}
