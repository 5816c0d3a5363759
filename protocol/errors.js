// Error classes of zeromesh. Match on `code`, never on the message: codes are stable,
// messages may improve. `retryable` says whether trying again (elsewhere) makes sense.

export class ZeromeshError extends Error {
  /**
   * @param {string} message
   * @param {{ code?: string, retryable?: boolean, cause?: unknown }} [opts]
   */
  constructor (message, opts = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = new.target.name
    this.code = opts.code ?? new.target.code ?? 'ERR_ZEROMESH'
    this.retryable = opts.retryable ?? new.target.retryable ?? false
  }
}

function define (name, code, retryable, defaultMessage) {
  const cls = {
    [name]: class extends ZeromeshError {
      constructor (message = defaultMessage, opts) { super(message, opts) }
    },
  }[name]
  cls.code = code
  cls.retryable = retryable
  return cls
}

/** No reply within the deadline, after the retries allowed. */
export const TimeoutError = define('TimeoutError', 'ERR_ZEROMESH_TIMEOUT', true, 'request timed out')
/** No peer could be reached before the deadline. */
export const NoPeersError = define('NoPeersError', 'ERR_ZEROMESH_NO_PEERS', true, 'no reachable peer')
/** The peer has no handler of that name. */
export const UnknownMethodError = define('UnknownMethodError', 'ERR_ZEROMESH_UNKNOWN_METHOD', false, 'unknown method')
/** The handler threw; `message` is the remote error's, `remoteCode` its `code` (or null). */
export class RemoteError extends ZeromeshError {
  static code = 'ERR_ZEROMESH_REMOTE'
  static retryable = false
  constructor (message = 'remote handler failed', opts = {}) {
    super(message, opts)
    this.remoteCode = opts.remoteCode ?? null
  }
}
/** Every peer tried was overloaded. */
export const BusyError = define('BusyError', 'ERR_ZEROMESH_BUSY', true, 'peer busy')
/** Every peer tried was stopping. */
export const DrainingError = define('DrainingError', 'ERR_ZEROMESH_DRAINING', true, 'peer draining')
/** The client or peer was closed. */
export const ClosedError = define('ClosedError', 'ERR_ZEROMESH_CLOSED', false, 'closed')
/** An argument or option is wrong; the message says what to use instead. */
export const InvalidArgumentError = define('InvalidArgumentError', 'ERR_ZEROMESH_INVALID_ARGUMENT', false, 'invalid argument')
/** The connection to the peer was lost while a non-idempotent request was in flight: it may or may not have run. */
export const ConnectionLostError = define('ConnectionLostError', 'ERR_ZEROMESH_CONNECTION_LOST', false, 'connection to the peer lost; the request may or may not have run')
/** The request was cancelled through its AbortSignal. */
export const AbortError = define('AbortError', 'ERR_ZEROMESH_ABORTED', false, 'request aborted')
/** No peer subscribed to the event (in the group asked for) within the deadline: it was delivered to no one. */
export const NoSubscribersError = define('NoSubscribersError', 'ERR_ZEROMESH_NO_SUBSCRIBERS', true, 'no subscriber for the event')
/**
 * A contract's input schema refused the arguments (docs/guides/contracts.md): the handler
 * never ran. `issues` says where and why, as `[{ path, message }]`, never the value itself.
 */
export class InvalidInputError extends ZeromeshError {
  static code = 'ERR_ZEROMESH_INVALID_INPUT'
  static retryable = false
  constructor (message = 'invalid input', opts = {}) {
    super(message, opts)
    this.issues = opts.issues ?? []
  }
}
/**
 * A result its contract's output schema refuses (implement()'s or client.proxy()'s
 * validateOutput); `issues` as InvalidInputError's. From a peer it arrives as a RemoteError
 * whose remoteCode is this code.
 */
export class InvalidOutputError extends ZeromeshError {
  static code = 'ERR_ZEROMESH_INVALID_OUTPUT'
  static retryable = false
  constructor (message = 'invalid output', opts = {}) {
    super(message, opts)
    this.issues = opts.issues ?? []
  }
}
/** The peer refused this side at the ZeroMQ handshake: a key not allowed, a wrong cluster key, CURVE on one side only. */
export const HandshakeError = define('HandshakeError', 'ERR_ZEROMESH_HANDSHAKE', false, 'handshake refused')
/** Code the user gave (a strategy, an event listener, a logger) threw; `cause` is what it threw. */
export const UserCodeError = define('UserCodeError', 'ERR_ZEROMESH_USER_CODE', false, 'user code threw')
/** A frame broke the wire format (shape, type, size, depth, version). */
export const ProtocolError = define('ProtocolError', 'ERR_ZEROMESH_PROTOCOL', false, 'protocol error')

/**
 * The codes a peer itself puts in a REMOTE answer (`err.remoteCode` in the client), beside
 * the handler's own: PROTOCOL.md 4.2.
 */
export const RemoteCode = Object.freeze({
  EXPIRED: 'ERR_ZEROMESH_EXPIRED', //         the deadline passed: a request's (on a thread's queue or in its handler) gets no answer, the client has its own timeout; a stream's ends with this code and its count (PROTOCOL.md 4.10)
  ENCODE: 'ERR_ZEROMESH_ENCODE', //           the result could not be encoded
  WORKER_EXIT: 'ERR_ZEROMESH_WORKER_EXIT', // the handler's thread ended
  TOO_LARGE: 'ERR_ZEROMESH_TOO_LARGE', //     the reply would exceed the frame size limit
  STREAM_ONLY: 'ERR_ZEROMESH_STREAM_ONLY', // a plain request to a method whose handler streams: call it with client.stream()
  INVALID_INPUT: InvalidInputError.code, //   a contract's input schema refused the arguments; the handler never ran (issues ride beside)
  INVALID_OUTPUT: InvalidOutputError.code, // the handler's result failed its contract's output schema (implement's validateOutput)
})

/**
 * The error a client raises for a REMOTE answer: InvalidInputError for a refused input (its
 * issues as the peer sent them), else RemoteError with the handler's code (and the issues of
 * a refused output).
 */
export function remoteError (message, code, issues) {
  if (code === InvalidInputError.code) return new InvalidInputError(message, { issues: issues ?? [] })
  const err = new RemoteError(message, { remoteCode: code })
  if (issues != null) err.issues = issues
  return err
}

export function invalidArgument (message) {
  return new InvalidArgumentError(`zeromesh: ${message}`)
}
