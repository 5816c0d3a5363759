// What each peer serves, as the peer itself said it: the client asks a peer (SERVICE_GET) on
// its own connection when the connection comes up and whenever a claim about the peer shows a
// service digest other than the one it holds, and routes by the answer alone. Claims relayed
// by other peers only prompt the question: a peer holding the cluster key cannot steer traffic
// by relaying "B serves nothing" or "B is in a far zone" (PROTOCOL.md 4.8).
//
// A peer that answers the question with ERROR "unknown type" is older than services: it says
// nothing of what it serves, so it may serve anything (ANY), and an UNKNOWN_METHOD answer from
// it is remembered per method instead.
import { encodeServiceGet } from '../protocol/codec.js'
import { ProtocolErrorCode } from '../protocol/constants.js'

/** What an older peer serves, as far as the client can tell: anything. */
export const ANY = Object.freeze({ any: true, digest: null, methods: Object.freeze([]), version: null, labels: Object.freeze({}), capacity: null, has: new Set() })

const MAX_DIGESTS = 256 // descriptors remembered by digest (services x versions x zones in a cluster)

export class ServiceBook {
  /**
   * @param {object} o
   * @param {(endpoint: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {number} o.timeout  wait this long for an answer
   * @param {(endpoint: string, service: object) => void} o.onService  an answer (a descriptor, or ANY)
   * @param {(endpoint: string) => void} o.onNoAnswer  no answer within the timeout
   */
  constructor (o) {
    this.o = o
    this.seq = 0
    this.pending = new Map() // endpoint -> { seq, timer }
    this.byDigest = new Map() // digest -> descriptor, as peers stated their own (a hint for others with the same digest)
    this.counts = { asked: 0, answers: 0, older: 0 }
  }

  /** Asks `endpoint` what it serves, unless a question is out already. */
  ask (endpoint) {
    if (this.pending.has(endpoint)) return
    const seq = this.seq = this.seq >= Number.MAX_SAFE_INTEGER ? 1 : this.seq + 1
    const timer = this.o.clock.setTimeout(() => {
      if (this.pending.get(endpoint)?.seq !== seq) return
      this.pending.delete(endpoint)
      this.o.onNoAnswer(endpoint)
    }, this.o.timeout)
    timer?.unref?.()
    this.pending.set(endpoint, { seq, timer })
    this.counts.asked++
    this.o.send(endpoint, [encodeServiceGet(seq)], (code) => {
      if (code !== null && this.pending.get(endpoint)?.seq === seq) this.settle(endpoint)
    })
  }

  /** Whether a question to `endpoint` is out. */
  asking (endpoint) {
    return this.pending.has(endpoint)
  }

  /** A SERVICE answer from `endpoint`; ignored unless it answers the question out to that peer. */
  onService (endpoint, msg) {
    if (this.pending.get(endpoint)?.seq !== msg.seq) return
    this.settle(endpoint)
    this.counts.answers++
    const d = msg.service
    if (this.byDigest.size >= MAX_DIGESTS && !this.byDigest.has(d.digest)) this.byDigest.delete(this.byDigest.keys().next().value)
    this.byDigest.set(d.digest, d)
    this.o.onService(endpoint, d)
  }

  /**
   * An ERROR frame from `endpoint`. While a question is out to it, "unknown type" is its
   * answer: an older peer (ANY). Returns whether the frame was that answer.
   */
  onError (endpoint, msg) {
    if (!this.pending.has(endpoint) || msg.code !== ProtocolErrorCode.UNKNOWN_TYPE) return false
    this.settle(endpoint)
    this.counts.older++
    this.o.onService(endpoint, ANY)
    return true
  }

  /** The descriptor a digest stood for when some peer stated it, or undefined. */
  known (digest) {
    return this.byDigest.get(digest)
  }

  settle (endpoint) {
    const p = this.pending.get(endpoint)
    if (p === undefined) return
    this.pending.delete(endpoint)
    this.o.clock.clearTimeout(p.timer)
  }

  /** The peer was dropped, or its connection went down: a question out to it is dropped. */
  forget (endpoint) {
    this.settle(endpoint)
  }

  stop () {
    for (const ep of [...this.pending.keys()]) this.settle(ep)
  }
}
