// What a Nest handler run by zeromesh gets as its RPC context (@Ctx(), or
// ExecutionContext.switchToRpc().getContext() in guards and interceptors): the zeromesh ctx of
// the call (runtime's RequestContext: headers, deadline, signal, publish), as a BaseRpcContext.
import { BaseRpcContext } from '@nestjs/microservices'

/** The request header Nest's packet metadata travels in, as JSON (nest/client.js sends it). */
export const METADATA_HEADER = 'nest-metadata'

export class ZeromeshContext extends BaseRpcContext {
  /** @param {[object]} args  [the zeromesh ctx] */
  constructor (args) {
    super(args)
  }

  /** The zeromesh ctx of this call (docs/reference/handlers.md): publish(), broadcast(), remaining(), trace. */
  getContext () {
    return this.args[0]
  }

  /** The caller's request headers, as the peer's middleware left them. */
  getHeaders () {
    return this.args[0].headers
  }

  /** Aborts when the caller cancels, the deadline passes, or the peer stops the work. */
  getSignal () {
    return this.args[0].signal
  }

  /** When the caller stops waiting: a performance.now() time, Infinity for none. */
  getDeadline () {
    return this.args[0].deadline
  }

  /**
   * Nest 12's packet metadata: what the caller's dispatch hook put on the packet, which a
   * ZeromeshClient sends as the request header `nest-metadata` (JSON); undefined when none.
   */
  getMetadata () {
    const json = this.args[0].headers?.[METADATA_HEADER]
    if (json === undefined) return undefined
    try {
      const m = JSON.parse(json)
      return m !== null && typeof m === 'object' && !Array.isArray(m) ? m : undefined
    } catch {
      return undefined
    }
  }

  /** The pattern (a zeromesh method or event name). */
  getPattern () {
    return this.args[0].method
  }

  /** An event's group (the subscription it ran for); null for a message or a broadcast. */
  getGroup () {
    return this.args[0].group ?? null
  }
}
