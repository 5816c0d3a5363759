// The ZAP handler (ZeroMQ RFC 27) of this process: libzmq asks it, at every CURVE handshake
// on a secured peer's socket, whether the client's public key may connect. It is a ROUTER
// bound at inproc://zeromq.zap.01 in zeromq's global context, which is where libzmq looks,
// so there is one per process; each secured socket registers a ZAP domain of its own with
// the policy that answers for it. Secured sockets also set zapEnforceDomain, so a handshake
// with no handler to answer it fails closed instead of open (shared/zmq-facts 6).
import process from 'node:process'
import * as zmq from 'zeromq'
import { z85Encode } from './keys.js'

const ZAP_ENDPOINT = 'inproc://zeromq.zap.01'
const EMPTY = Buffer.alloc(0)

let handler = null // the process's one handler, while any domain is registered
let nextDomain = 0
let closedAt = -Infinity // when the last handler closed: its inproc name frees a moment later

/**
 * Registers a policy and returns its domain, to be set as the socket's `zapDomain`. `policy`
 * is { allows(key, address) -> true | false | reason, decided(allowed, key, address, reason) },
 * asked with the client's public key in Z85 and its IP address; `decided` hears every answer
 * (reason: 'not CURVE', 'key not allowed', or the reason `allows` gave). Call `release(domain)` when the socket
 * closes; the handler closes with the last domain.
 */
export async function register (policy) {
  if (handler === null) handler = new ZapHandler()
  const h = handler
  await h.ready
  const domain = `zeromesh-${process.pid}-${++nextDomain}`
  h.domains.set(domain, policy)
  return domain
}

export function release (domain) {
  const h = handler
  if (h === null || !h.domains.delete(domain) || h.domains.size > 0) return
  handler = null
  h.close()
}

class ZapHandler {
  constructor () {
    this.domains = new Map() // ZAP domain -> policy
    this.socket = new zmq.Router({ linger: 0 })
    this.ready = this.bind().catch((err) => {
      this.socket.close()
      if (handler === this) handler = null
      throw err.code === 'EADDRINUSE'
        ? new Error(`zeromesh runs the ZAP handler of its secured peers at ${ZAP_ENDPOINT}, and another one is bound there in zeromq's global context of this process`)
        : err
    })
    this.loop = this.ready.then(() => this.serve(), () => {})
  }

  async bind () {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.socket.bind(ZAP_ENDPOINT)
      } catch (err) {
        // The handler closed a moment ago (a peer stopped as another started) holds the name
        // until ZeroMQ's own thread lets it go.
        if (err.code !== 'EADDRINUSE' || attempt >= 50 || Date.now() - closedAt > 2000) throw err
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
  }

  async serve () {
    const s = this.socket
    try {
      while (!s.closed) {
        const frames = await s.receive()
        const reply = this.answer(frames)
        if (reply !== null) await s.send(reply)
      }
    } catch (err) {
      if (!s.closed) throw err
    }
  }

  /**
   * A ZAP request: [client, '', version, requestId, domain, address, identity, mechanism,
   * credentials...]; the answer: [client, '', '1.0', requestId, status, text, userId, meta].
   */
  answer (frames) {
    if (frames.length < 8) return null // not a ZAP request: libzmq never sends one
    const [client, empty, version, requestId, domain, address, , mechanism, key] = frames
    const reply = (status, text, user = '') => [client, empty, '1.0', requestId, status, text, user, EMPTY]
    if (version.toString() !== '1.0') return reply('500', 'ZAP version 1.0 only')
    const policy = this.domains.get(domain.toString())
    if (policy === undefined) return reply('400', 'unknown domain')
    if (mechanism.toString() !== 'CURVE' || key === undefined || key.length !== 32) {
      policy.decided(false, null, address.toString(), 'not CURVE')
      return reply('400', 'CURVE only')
    }
    const text = z85Encode(key)
    const from = address.toString()
    let verdict
    try { verdict = policy.allows(text, from) } catch { verdict = false }
    const allowed = verdict === true
    const why = allowed ? null : typeof verdict === 'string' ? verdict : 'key not allowed'
    policy.decided(allowed, text, from, why)
    return allowed ? reply('200', 'OK', text) : reply('400', why)
  }

  close () {
    closedAt = Date.now()
    this.socket.close()
  }
}
