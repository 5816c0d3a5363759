// What a peer serves: its service descriptor (method names, an optional semver version,
// labels such as zone, an optional declared capacity), the digest that stands for it in
// membership claims, and the checks both ends apply. PROTOCOL.md 4.8 is the contract.
//
// The descriptor itself travels only in a SERVICE answer from the peer it describes, on the
// asker's own connection; claims carry its 32-bit digest, so member lists stay small at 1,000
// members with 50 methods each, and a digest that changes tells a client to ask again.
// semver's three functions, not its index (which loads all 47 of its modules at start-up)
import validVersion from 'semver/functions/valid.js'
import validRange from 'semver/ranges/valid.js'
import satisfies from 'semver/functions/satisfies.js'
import { Limits } from './constants.js'
import { fnv1a } from './fnv.js'
import { subscriptionKey } from './events.js'
import { byCodeUnits } from './code-units.js'

const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/
const CONTROL = /[\u0000-\u001f\u007f]/ // eslint-disable-line no-control-regex

/**
 * Why `d` is not a valid descriptor ({ methods, version, labels, capacity }), or null.
 * Limits are Limits.maxMethods etc. (PROTOCOL.md 3.3).
 */
export function descriptorProblem (d, limits = Limits) {
  const maxMethods = limits.maxMethods ?? Limits.maxMethods
  const maxMethodLength = limits.maxMethodLength ?? Limits.maxMethodLength
  if (!Array.isArray(d.methods)) return 'methods must be an array of names'
  if (d.methods.length > maxMethods) return `${d.methods.length} methods, more than ${maxMethods}`
  const seen = new Set()
  for (const m of d.methods) {
    if (typeof m !== 'string' || m.length === 0 || m.length > maxMethodLength) return `a method name must be a string of 1 to ${maxMethodLength} characters`
    if (seen.has(m)) return `method "${m}" is listed twice`
    seen.add(m)
  }
  if (d.version !== null && (typeof d.version !== 'string' || d.version.length > Limits.maxVersionLength || validVersion(d.version) === null)) {
    return `version must be a semantic version such as 2.1.0 (at most ${Limits.maxVersionLength} characters), got ${JSON.stringify(d.version)}`
  }
  const labels = d.labels
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels) || Object.getPrototypeOf(labels) !== Object.prototype) return 'labels must be a map of strings'
  const keys = Object.keys(labels)
  if (keys.length > Limits.maxLabels) return `${keys.length} labels, more than ${Limits.maxLabels}`
  for (const k of keys) {
    if (k.length > Limits.maxLabelLength || !LABEL_KEY.test(k)) return `label key ${JSON.stringify(k)} must be 1 to ${Limits.maxLabelLength} letters, digits, '.', '_', '/' or '-', starting with a letter or digit`
    const v = labels[k]
    if (typeof v !== 'string' || v.length > Limits.maxLabelLength || CONTROL.test(v) || v.includes(',')) return `label ${k} must be a string of at most ${Limits.maxLabelLength} characters without commas or control characters`
  }
  if (d.capacity !== null && (!Number.isInteger(d.capacity) || d.capacity < 1 || d.capacity > 2 ** 31 - 1)) return 'capacity must be a whole number from 1 to 2^31-1, or none'
  return null
}

/**
 * The digest of a descriptor: FNV-1a (32 bit, over UTF-16 code units) of its canonical text,
 * the sorted method names, the version, the sorted `key=value` labels and the capacity, each
 * part ended by a NUL and the names and labels within a part by a line feed (PROTOCOL.md 4.8).
 */
export function serviceDigest (d) {
  const methods = [...d.methods].sort(byCodeUnits).join('\n')
  const labels = Object.keys(d.labels).sort(byCodeUnits).map((k) => `${k}=${d.labels[k]}`).join('\n')
  return fnv1a(`${methods}\0${d.version ?? ''}\0${labels}\0${d.capacity ?? ''}\0`)
}

/**
 * A descriptor as both ends hold it: the fields, its digest, a Set of its methods, one of the
 * methods it serves as streams, and one of its subscriptions (`event\0group`, events.js) for
 * lookups, and its groups by event. `d` must have passed descriptorProblem.
 */
export function describe (d) {
  const events = d.events ?? null
  const groups = new Map() // event -> [group, ...]
  for (const [e, g] of events ?? []) { let l = groups.get(e); if (l === undefined) groups.set(e, l = []); l.push(g) }
  return Object.freeze({
    methods: Object.freeze([...d.methods].sort(byCodeUnits)),
    version: d.version,
    labels: Object.freeze({ ...d.labels }),
    capacity: d.capacity,
    // The contracts element as it travels (contracts.js; readContracts() reads it), or null.
    contracts: d.contracts ?? null,
    // The events element as it travels (events.js: [[event, group], ...]), or null.
    events,
    // The streams element as it travels (stream-methods.js: method names), or null.
    streams: d.streams ?? null,
    digest: serviceDigest(d),
    has: new Set(d.methods),
    streaming: new Set(d.streams ?? []),
    subs: new Set((events ?? []).map(([e, g]) => subscriptionKey(e, g))),
    groups,
  })
}

/** A `version` request option checked: a semver range such as '^2', '~2.1' or '>=1.2 <3'; null when left out. */
export function versionRange (v) {
  if (v === undefined || v === null) return null
  if (typeof v !== 'string' || v.length === 0 || v.length > 256) return undefined
  return validRange(v) === null ? undefined : v
}

const rangeCache = new Map() // "range\0version" -> boolean: a handful of versions and ranges in any cluster

/** Whether `version` (a peer's, or null) satisfies `range`. A peer with no version satisfies none. */
export function versionMatches (range, version) {
  if (version === null) return false
  const k = `${range}\0${version}`
  let hit = rangeCache.get(k)
  if (hit === undefined) {
    if (rangeCache.size >= 4096) rangeCache.clear()
    hit = satisfies(version, range, { includePrerelease: true })
    rangeCache.set(k, hit)
  }
  return hit
}

/** Whether `labels` has every key of `where` with the same value. */
export function labelsMatch (where, labels) {
  for (const k in where) if (labels[k] !== where[k]) return false
  return true
}

/** A `where` selector checked: a map of label keys to strings; null when left out or empty. */
export function whereProblem (where) {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return 'where must be a map of label keys to values, such as { zone: "a" }'
  for (const [k, v] of Object.entries(where)) {
    if (!LABEL_KEY.test(k) || k.length > Limits.maxLabelLength) return `where: ${JSON.stringify(k)} is not a label key`
    if (typeof v !== 'string') return `where.${k} must be a string`
  }
  return null
}
