// The `issues` of a refused input (PROTOCOL.md 4.2): where the arguments broke their contract's
// schema and why, as `[[message, path], ...]`, riding as the optional third element of a
// REMOTE value `[message, code, issues]`. Older receivers read the first two and ignore it.
// Issues carry the schema's message and the path to the field, never the offending value.
import { Limits } from './constants.js'
import { RemoteCode } from './errors.js'

/**
 * Standard Schema issues (`{ message, path? }`, each path segment a key or `{ key }`) as they
 * travel: cut to the limits, paths of strings and whole numbers.
 * @param {ReadonlyArray<{ message?: unknown, path?: ReadonlyArray<unknown> }>} issues
 * @returns {Array<[string, Array<string|number>]>}
 */
export function wireIssues (issues) {
  const out = []
  if (!Array.isArray(issues)) return out
  for (const issue of issues.slice(0, Limits.maxIssues)) {
    const message = String(issue?.message ?? 'invalid').slice(0, Limits.maxIssueMessageLength)
    const path = []
    for (const seg of (Array.isArray(issue?.path) ? issue.path : []).slice(0, Limits.maxIssuePathLength)) {
      const key = seg !== null && typeof seg === 'object' ? seg.key : seg
      path.push(Number.isInteger(key) && key >= 0 ? key : String(typeof key === 'symbol' ? key.description : key).slice(0, Limits.maxIssueSegmentLength))
    }
    out.push([message, path])
  }
  return out
}

/**
 * The issues of a received REMOTE value's third element as `[{ path, message }]`, or null
 * when it is absent or breaks the format or a limit (the error is read without them).
 */
export function readIssues (v) {
  if (!Array.isArray(v) || v.length > Limits.maxIssues) return null
  const out = []
  for (const e of v) {
    if (!Array.isArray(e) || typeof e[0] !== 'string' || e[0].length > Limits.maxIssueMessageLength || !Array.isArray(e[1]) || e[1].length > Limits.maxIssuePathLength) return null
    for (const seg of e[1]) {
      if (!(typeof seg === 'string' && seg.length <= Limits.maxIssueSegmentLength) && !(Number.isInteger(seg) && seg >= 0)) return null
    }
    out.push({ path: e[1], message: e[0] })
  }
  return out
}

/** The REMOTE value of a handler's error: `[message, code]`, with its issues when the error is a refused input or output. */
export function remoteValue (err) {
  const message = err instanceof Error ? err.message : String(err)
  const code = typeof err?.code === 'string' ? err.code : null
  if ((code === RemoteCode.INVALID_INPUT || code === RemoteCode.INVALID_OUTPUT) && Array.isArray(err.issues)) return [message, code, wireIssues(err.issues)]
  return [message, code]
}

/** A handler's error again from its REMOTE value (as a thread hands it to the main thread): code and issues kept. */
export function errorFromValue (value, ErrorClass) {
  const err = value[1] === null ? new Error(value[0]) : new ErrorClass(value[0], { code: value[1] })
  if (value.length > 2) err.issues = readIssues(value[2]) ?? []
  return err
}

/** One line naming the issues, for an error's message: `id: expected string; items.0: too small`. */
export function issuesText (issues) {
  const shown = issues.slice(0, 3).map((i) => `${i.path.length === 0 ? '(input)' : i.path.join('.')}: ${i.message}`)
  return shown.join('; ') + (issues.length > 3 ? `; and ${issues.length - 3} more` : '')
}
