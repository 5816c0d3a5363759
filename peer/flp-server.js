// The peer's side of the Freelance Protocol (10/FLP, protocol/flp.js), for clients that speak
// it instead of zeromesh: a PING gets PONG, a request the user's flpHandler's answer.
import { FLP_PONG } from '../protocol/constants.js'

const PONG = Buffer.from(FLP_PONG)

export class FlpServer {
  /**
   * @param {object} o
   * @param {(clientId: Buffer, frames: Buffer[]) => void} o.send  the listener's send (null-safe once stopped is the caller's)
   * @param {(body: Buffer[]) => unknown} o.handler  the flpHandler option: frames in, a frame or frames (or a promise of them) out
   * @param {{ maxMessageSize: number, maxBatch: number }} o.limits
   * @param {object} o.counts  the peer's counters: flpPings, flpRequests, flpTooLarge, malformed
   */
  constructor (o) {
    this.o = o
  }

  ping (clientId) {
    this.o.counts.flpPings++
    this.o.send(clientId, [PONG])
  }

  request (clientId, frames) {
    const { counts, limits } = this.o
    // FLP messages are multipart, and ZeroMQ bounds each frame, not the message: a message
    // over maxMessageSize in all, or of more than maxBatch frames, is dropped unanswered.
    let bytes = 0
    for (let i = 0; i < frames.length; i++) bytes += frames[i].length
    if (bytes > limits.maxMessageSize || frames.length > limits.maxBatch) {
      counts.flpTooLarge++
      counts.malformed++
      return
    }
    counts.flpRequests++
    const control = frames[0]
    const body = frames.slice(1)
    let out
    try {
      out = this.o.handler(body)
    } catch {
      return // a throwing FLP handler gets no reply: FLP has no error frame
    }
    Promise.resolve(out).then((reply) => {
      const list = Array.isArray(reply) ? reply : [reply]
      this.o.send(clientId, [control, ...list.map(toFrame)])
    }, () => {})
  }
}

function toFrame (x) {
  if (Buffer.isBuffer(x)) return x
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength)
  return Buffer.from(String(x))
}
