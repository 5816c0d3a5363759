// Shape checks for decoded frames. Everything decoded from the wire passes through here
// before any other code looks at it; a failure is a ProtocolError, never anything else.
import { ProtocolError } from './errors.js'
import { MAX_REQUEST_ID, Limits } from './constants.js'

const objectProto = Object.prototype

/**
 * Whether `value` is plain data (null, undefined, boolean, number, string, bytes, Date,
 * arrays and plain objects of those) nested no deeper than `maxDepth`.
 * Returns null when it is, or a short reason when it is not.
 */
export function checkValue (value, maxDepth) {
  return walk(value, 0, maxDepth)
}

function walk (v, depth, maxDepth) {
  if (v === null || typeof v !== 'object') {
    const t = typeof v
    if (t === 'string' || t === 'number' || t === 'boolean' || t === 'undefined' || v === null) return null
    return `a ${t} is not plain data` // bigint (msgpack ext 0x42), function, symbol
  }
  if (v instanceof Uint8Array || v instanceof Date) return null
  if (depth >= maxDepth) return `nested deeper than ${maxDepth}`
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = walk(v[i], depth + 1, maxDepth)
      if (r !== null) return r
    }
    return null
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== objectProto && proto !== null) return `a ${v.constructor?.name ?? 'non-plain object'} is not plain data`
  for (const k in v) {
    const r = walk(v[k], depth + 1, maxDepth)
    if (r !== null) return r
  }
  return null
}

export function isUint (v, max = MAX_REQUEST_ID) {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max
}

export function fail (message) {
  return new ProtocolError(`zeromesh protocol: ${message}`)
}

/** Returns `list` when it is an array of 1..maxBatch items, or throws. */
export function checkList (list, what, maxBatch) {
  if (!Array.isArray(list)) throw fail(`${what} must be an array`)
  if (list.length === 0) throw fail(`${what} is empty`)
  if (list.length > maxBatch) throw fail(`${what} has ${list.length} entries, more than ${maxBatch}`)
  return list
}

export function checkMeta (meta) {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta) || Object.getPrototypeOf(meta) !== objectProto) {
    throw fail('meta must be a map')
  }
  return meta
}

/**
 * A `trace` field that is an empty map (PROTOCOL.md 4.1): the caller's trace is not sampled, so
 * the receiver records nothing of the call and its handler's own calls continue that decision.
 * One shared frozen object, what traceCarrier() reads an empty map as, and what a client sends.
 */
export const UNSAMPLED_TRACE = Object.freeze({})

/**
 * A `trace` field as it came off the wire (PROTOCOL.md 4.1), as a carrier for a propagator's
 * extract(): a map of at most Limits.maxTraceFields strings, UNSAMPLED_TRACE for an empty map,
 * or null when it is absent or breaks a limit (then it is ignored: the request is served
 * without a parent).
 */
export function traceCarrier (v) {
  if (v === undefined || v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array || v instanceof Date) return null
  const out = Object.create(null)
  let n = 0
  for (const k in v) {
    const value = v[k]
    if (++n > Limits.maxTraceFields || k.length === 0 || k.length > Limits.maxTraceKeyLength) return null
    if (typeof value !== 'string' || value.length > Limits.maxTraceValueLength) return null
    out[k] = value
  }
  return n === 0 ? UNSAMPLED_TRACE : out
}
