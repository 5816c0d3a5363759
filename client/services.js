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
import { Answer } from '../transport/questions.js'

/** What an older peer serves, as far as the client can tell: anything. */
export const ANY = Object.freeze({ any: true, digest: null, methods: Object.freeze([]), version: null, labels: Object.freeze({}), capacity: null, has: new Set() })

const MAX_DIGESTS = 256 // descriptors remembered by digest (services x versions x zones in a cluster)
const OLDER = Object.freeze({ older: true }) // the answer of a peer that does not know the question

export class ServiceBook {
  /**
   * @param {object} o
   * @param {import('../transport/questions.js').Questions} o.questions
   * @param {number} o.timeout  wait this long for an answer
   * @param {(endpoint: string, service: object, features: number) => void} o.onService  an answer (a descriptor, or ANY), and the peer's features (protocol/constants.js Feature)
   * @param {(endpoint: string) => void} o.onNoAnswer  no answer within the timeout
   */
  constructor (o) {
    this.o = o
    this.out = new Map() // endpoint -> seq of the question out to it
    this.byDigest = new Map() // digest -> descriptor, as peers stated their own (a hint for others with the same digest)
    this.counts = { asked: 0, answers: 0, older: 0 }
  }

  /** Asks `endpoint` what it serves, unless a question is out already. */
  ask (endpoint) {
    if (this.out.has(endpoint)) return
    this.counts.asked++
    this.out.set(endpoint, -1) // set before the send: an answer may come within it
    const seq = this.o.questions.ask(endpoint, encodeServiceGet, this.o.timeout, (answer) => this.answered(endpoint, answer))
    if (this.out.get(endpoint) === -1) this.out.set(endpoint, seq)
  }

  answered (endpoint, answer) {
    this.out.delete(endpoint)
    if (answer === null) return this.o.onNoAnswer(endpoint)
    if (answer === OLDER) { this.counts.older++; return this.o.onService(endpoint, ANY, 0) }
    this.counts.answers++
    const d = answer.service
    if (this.byDigest.size >= MAX_DIGESTS && !this.byDigest.has(d.digest)) this.byDigest.delete(this.byDigest.keys().next().value)
    this.byDigest.set(d.digest, d)
    this.o.onService(endpoint, d, answer.features ?? 0)
  }

  /** A SERVICE answer from `endpoint`. */
  onService (endpoint, msg) {
    this.o.questions.answer(endpoint, msg.seq, msg)
  }

  /**
   * An ERROR frame from `endpoint`. While a question is out to it, "unknown type" is its
   * answer: an older peer (ANY). Returns whether the frame was that answer.
   */
  onError (endpoint, msg) {
    const seq = this.out.get(endpoint)
    if (seq === undefined || msg.code !== ProtocolErrorCode.UNKNOWN_TYPE) return false
    return this.o.questions.answer(endpoint, seq, OLDER) === Answer.TAKEN
  }

  /** The descriptor a digest stood for when some peer stated it, or undefined. */
  known (digest) {
    return this.byDigest.get(digest)
  }
}
