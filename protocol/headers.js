// Request headers (PROTOCOL.md 4.1): a map of strings a caller sends beside a request's or a
// stream's args (auth tokens, a tenant, a locale), for the peer's middleware and handlers
// (`ctx.headers`). Keys are lowercase, as HTTP/2 writes header names, so `authorization` is
// one key however a caller spells it. Both ends check them the same way: a client before it
// sends (InvalidArgumentError), a peer on receipt (the request is refused INVALID_REQUEST).
import { Limits } from './constants.js'

/** The headers of a request that carries none. */
export const NO_HEADERS = Object.freeze({})

const KEY = /^[a-z0-9][a-z0-9._-]*$/

/** Why `h` is not a valid headers map, or null. Limits: Limits.maxHeaders and the rest (PROTOCOL.md 3.3). */
export function headersProblem (h) {
  if (h === null || typeof h !== 'object' || Array.isArray(h) || (Object.getPrototypeOf(h) !== Object.prototype && Object.getPrototypeOf(h) !== null)) return 'headers must be a map of strings, such as { authorization: "Bearer ..." }'
  const keys = Object.keys(h)
  if (keys.length > Limits.maxHeaders) return `${keys.length} headers, more than ${Limits.maxHeaders}`
  let bytes = 0
  for (const k of keys) {
    if (k.length > Limits.maxHeaderKeyLength || !KEY.test(k)) return `header name ${JSON.stringify(k.slice(0, 80))} must be 1 to ${Limits.maxHeaderKeyLength} lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`
    const v = h[k]
    if (typeof v !== 'string') return `header ${k} must be a string`
    if (v.length > Limits.maxHeaderValueLength) return `header ${k} is ${v.length} characters, more than ${Limits.maxHeaderValueLength}`
    bytes += k.length + v.length
  }
  if (bytes > Limits.maxHeaderBytes) return `headers of ${bytes} characters in all, more than ${Limits.maxHeaderBytes}`
  return null
}

/**
 * A received headers element: { headers } (frozen; NO_HEADERS for nil) or { reason } when it
 * breaks the format or a limit.
 */
export function readHeaders (v) {
  if (v === null || v === undefined) return { headers: NO_HEADERS }
  const reason = headersProblem(v)
  return reason === null ? { headers: Object.freeze(v) } : { reason: `headers: ${reason}` }
}
