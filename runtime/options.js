// Option checking shared by Client and Peer: unknown keys are refused with the list of
// known ones, every value is checked where it enters, and messages name the library.
import { invalidArgument } from '../protocol/errors.js'
import { Limits } from '../protocol/constants.js'

/**
 * @param {string} what   e.g. "Peer options"
 * @param {object|undefined} given
 * @param {Record<string, (v: any, name: string) => any>} spec  key -> checker(value) returning the value to use
 */
export function checkOptions (what, given, spec) {
  if (given === undefined) given = {}
  mustBeObject(what, given)
  for (const k of Object.keys(given)) knownKey(what, k, spec)
  const out = {}
  for (const [k, check] of Object.entries(spec)) out[k] = check(given[k], k)
  // A copy with fast properties: this many keys added one by one leave V8 an object in
  // dictionary mode, and options are read on every request.
  return { ...out }
}

/**
 * checkOptions for options given often (per call): `defaults` holds what every checker makes
 * of undefined, so only the keys given are checked; the result has the defaults' shape.
 * @param {string} what
 * @param {object} given
 * @param {Record<string, (v: any, name: string) => any>} spec
 * @param {object} defaults  spec's key -> check(undefined)
 */
export function checkGiven (what, given, spec, defaults) {
  mustBeObject(what, given)
  const out = { ...defaults }
  for (const k in given) {
    if (!Object.hasOwn(given, k)) continue
    knownKey(what, k, spec)
    out[k] = spec[k](given[k], k)
  }
  return out
}

function mustBeObject (what, given) {
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw invalidArgument(`${what} must be an object`)
}

function knownKey (what, k, spec) {
  if (!Object.hasOwn(spec, k)) throw invalidArgument(`unknown ${what} key "${k}"; known keys: ${Object.keys(spec).join(', ')}`)
}

/** A whole number in [min, max], or `def` when undefined. */
export function int (def, min, max = Number.MAX_SAFE_INTEGER) {
  return (v, name) => {
    if (v === undefined) return def
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw invalidArgument(`${name} must be a whole number from ${min} to ${max}, got ${String(v)}`)
    }
    return v
  }
}

/** A number (not necessarily whole) in [min, max], or `def` when undefined. */
export function num (def, min, max = Number.MAX_VALUE) {
  return (v, name) => {
    if (v === undefined) return def
    if (typeof v !== 'number' || !(v >= min && v <= max)) throw invalidArgument(`${name} must be a number from ${min} to ${max}, got ${String(v)}`)
    return v
  }
}

export function bool (def) {
  return (v, name) => {
    if (v === undefined) return def
    if (typeof v !== 'boolean') throw invalidArgument(`${name} must be true or false, got ${String(v)}`)
    return v
  }
}

export function fn (def) {
  return (v, name) => {
    if (v === undefined) return def
    if (typeof v !== 'function') throw invalidArgument(`${name} must be a function`)
    return v
  }
}

export function any (def) {
  return (v) => v === undefined ? def : v
}

const silent = () => {}
/** The logger of a Peer or Client that was given none: says nothing. */
export const SILENT_LOGGER = Object.freeze({ trace: silent, debug: silent, info: silent, warn: silent, error: silent, fatal: silent })

/**
 * A `logger` option: pino's interface (`logger.info(fields, message)`, and debug, warn,
 * error), which pino, and console-like adapters, give. Absent: the library is silent.
 */
export function loggerOption (v, name) {
  if (v === undefined || v === null) return SILENT_LOGGER
  for (const level of ['debug', 'info', 'warn', 'error']) {
    if (typeof v?.[level] !== 'function') throw invalidArgument(`${name} must have debug, info, warn and error methods taking (fields, message), as a pino logger does`)
  }
  return v
}

/** A stream window { items, bytes }: how much one side may send ahead of the other's reading. */
export function windowOption (def) {
  return (v, name) => {
    if (v === undefined) return def
    const items = v?.items ?? def.items
    const bytes = v?.bytes ?? def.bytes
    if (v === null || typeof v !== 'object' || Object.keys(v).some((k) => k !== 'items' && k !== 'bytes') ||
        !Number.isInteger(items) || items < 1 || items > Limits.maxCreditItems || !Number.isInteger(bytes) || bytes < 1 || bytes > Limits.maxCreditBytes) {
      throw invalidArgument(`${name} must be { items: 1 to ${Limits.maxCreditItems}, bytes: 1 to ${Limits.maxCreditBytes} }, got ${JSON.stringify(v)}`)
    }
    return Object.freeze({ items, bytes })
  }
}

/**
 * A method name given to the API (request, stream, waitFor, serve): a string of 1 to
 * Limits.maxMethodLength characters, as the wire takes it, not starting with a NUL (a
 * subscription's name in a worker thread: peer/handler-module.js). `what` names the argument.
 */
export function checkMethod (v, what = 'method') {
  if (typeof v !== 'string' || v.length === 0 || v.length > Limits.maxMethodLength || v.charCodeAt(0) === 0) {
    throw invalidArgument(`${what} must be a non-empty string of at most ${Limits.maxMethodLength} characters, got ${typeof v === 'string' ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v) : typeof v}`)
  }
  return v
}
