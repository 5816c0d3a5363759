// What a client middleware sees of one call (docs/guides/middleware.md): before next(), what
// will be sent, which it may change (method, args, headers, timeout, signal, the other options);
// after it, for a request, the peer that answered and the attempts it took.

export class CallContext {
  /**
   * @param {'request'|'stream'|'publish'|'broadcast'} kind  (an event's `method` is its name, its `args` the payload)
   * @param {string} method
   * @param {unknown} args
   * @param {object} [options]  the call's options as given
   */
  constructor (kind, method, args, options) {
    this.kind = kind
    this.method = method
    this.args = args
    this.timeout = options?.timeout // undefined: the client's default
    this.signal = options?.signal
    this.peer = null //     the endpoint of the peer whose answer settled a request, once settled
    this.attempts = 0 //    the attempts a request took, once settled
    this.given = options
    this._headers = null // made on first use: a chain that reads nothing costs no copies
    this._options = null
  }

  /** The request headers to send, an object of the middleware's own to fill (a copy of the given ones). */
  get headers () {
    if (this._headers === null) this._headers = this.given?.headers ? { ...this.given.headers } : {}
    return this._headers
  }

  set headers (h) {
    this._headers = h
  }

  /** The other options as given (idempotent, key, version, where, hedge; a stream's window, input, idleTimeout), to change. */
  get options () {
    if (this._options === null) {
      const { headers, timeout, signal, ...rest } = this.given ?? {}
      this._options = rest
    }
    return this._options
  }

  /** The options the call is sent with, as the chain left them (the given ones, untouched, when it changed nothing). */
  sendOptions () {
    const g = this.given
    if (this._headers === null && this._options === null && this.timeout === g?.timeout && this.signal === g?.signal) return g
    const o = { ...(this._options ?? g) }
    o.headers = this._headers ?? g?.headers
    if (this.timeout !== undefined) o.timeout = this.timeout
    else delete o.timeout
    if (this.signal !== undefined) o.signal = this.signal
    else delete o.signal
    return o
  }
}

/**
 * A stream whose opening waits for the middleware (`opened`: a promise of the stream, or of
 * the iterable a middleware returned instead): iterable at once, as client.stream()'s is; an
 * error of the chain comes out of the iteration.
 */
export function pendingStream (opened) {
  let source = null
  let iterator = null
  opened.catch(() => {}) // read by the first next(); never an unhandled rejection if nobody iterates
  const open = async () => {
    if (iterator === null) { source = await opened; iterator = source[Symbol.asyncIterator]() }
    return iterator
  }
  return {
    [Symbol.asyncIterator] () { return this },
    async next () { return (await open()).next() },
    async return (value) {
      let it
      try { it = await open() } catch { return { value, done: true } }
      return typeof it.return === 'function' ? it.return(value) : { value, done: true }
    },
    /** Items that arrived so far (the stream's own count, when the chain handed back the stream). */
    get received () { return source?.received ?? 0 },
  }
}
