// How a peer publishes and broadcasts events (peer.publish, ctx.publish in its handlers, on
// its main thread or a worker thread's): through a Client of its own, made when first used.
// A peer that publishes is a client of the other peers: routing by subscription, balancing,
// failover and redelivery are the client's (client/calls.js), and a second copy of them over
// the peer's membership would drift from the first. The peer's membership knows every member
// but not what each subscribes to; the client asks them, as any client does, seeded with this
// peer itself. In a secured cluster it holds the cluster's key, which every peer lets in.
// The client's modules load with that first use: a peer that never publishes (most) starts
// without them.
import { ClosedError } from '../protocol/errors.js'
import { underTrace } from './tracing.js'

export class PeerPublisher {
  /**
   * @param {object} o
   * @param {() => string} o.endpoint  this peer's, once bound: the client's seed
   * @param {object|null|false} o.security  the peer's resolved security
   * @param {object} o.options  the peer's clock, logger and transport, which its client shares
   */
  constructor (o) {
    this.o = o
    this.client = null
    this.closed = false
  }

  /** The client, made on first use (a promise of it; null once closed). */
  get () {
    if (this.closed) return Promise.resolve(null)
    // A client that could not be made is tried again at the next use, as it was made anew.
    if (this.client === null) this.client = this.make().catch((err) => { this.client = null; throw err })
    return this.client
  }

  async make () {
    const { Client } = await import('../client/client.js')
    const { security, options } = this.o
    return new Client({
      seeds: [this.o.endpoint()],
      security: security ? { clusterPublicKey: security.cluster.publicKey, secretKey: security.cluster.secretKey } : security === false ? false : undefined,
      clock: options.clock,
      logger: options.logger,
      transport: options.transport,
      durable: options.durable, // ctx.publish of a durable event goes to the log
    })
  }

  /** `trace`: the span context of the handler that publishes (ctx.trace), or null. */
  publish (event, payload, opts, trace = null) {
    return this.get().then((c) => c === null ? closed() : underTrace(trace, () => c.publish(event, payload, opts)))
  }

  broadcast (event, payload, opts, trace = null) {
    return this.get().then((c) => c === null ? closed() : underTrace(trace, () => c.broadcast(event, payload, opts)))
  }

  async close () {
    this.closed = true
    const c = await this.client?.catch(() => null)
    return c?.close()
  }
}

function closed () {
  return Promise.reject(new ClosedError('zeromesh: the peer is stopped: it publishes nothing more'))
}
