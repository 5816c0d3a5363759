// The errors of durable events, beside zeromesh's own (protocol/errors.js): match on `code`.
import { ZeromeshError } from '../protocol/errors.js'

/**
 * NATS or JetStream cannot take the publish now: not connected (reconnecting), no stream
 * answering, or no confirmation within publishTimeout. Retryable: publish again with the same
 * `id` and it is stored once (the duplicate window). `stored` is false when it was certainly
 * not stored, null when it may have been (a confirmation lost).
 */
export class DurableUnavailableError extends ZeromeshError {
  static code = 'ERR_ZEROMESH_DURABLE_UNAVAILABLE'
  static retryable = true
  constructor (message, { stored = false, cause } = {}) {
    super(message, { cause })
    this.stored = stored
  }
}

/** The @nats-io packages durable events need are not installed (they are optional peer dependencies). */
export class DurableSetupError extends ZeromeshError {
  static code = 'ERR_ZEROMESH_DURABLE_SETUP'
  static retryable = false
}

/** Codes a dead letter's Zeromesh-Error-Code header may carry besides a handler's own. */
export const DeadCode = Object.freeze({
  UNDECODABLE: 'ERR_ZEROMESH_UNDECODABLE', //  the payload is not MessagePack, or its headers not JSON: no attempt could succeed
  LOST: 'ERR_ZEROMESH_DELIVERY_LOST', //       the last attempt's peer was lost (killed inside the handler) before it answered
  TIMEOUT: 'ERR_ZEROMESH_TIMEOUT', //          the handler ran past `timeout`
})
