// Parsing of the command line: flags (with "did you mean" for near misses), the environment
// as a fallback for flags, and the checks of numbers and sizes. Usage errors exit 2.
import { parseArgs } from 'node:util'
import process from 'node:process'

/** A usage error: the command line is wrong (exit 2). */
export class UsageError extends Error {}

export function parse (args, options, usage, allowPositionals = false) {
  // "--threads -1": a value that looks like an option is still the flag's value, so the
  // flag's own check can say what is wrong with it.
  const joined = []
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : null
    if (name !== null && options[name]?.type === 'string' && /^-\d/.test(args[i + 1] ?? '')) joined.push(`${args[i]}=${args[++i]}`)
    else joined.push(args[i])
  }
  try {
    return parseArgs({ args: joined, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true })
  } catch (err) {
    const unknown = /Unknown option '(-{1,2})([^']+)'/.exec(err.message)
    const near = unknown === null ? null : closest(unknown[2], Object.keys(options))
    const hint = near === null ? '' : `; did you mean --${near}?`
    throw new UsageError(`${err.message.replace(/\. To specify a positional argument.*$/s, '')}${hint}\n\n${usage}`)
  }
}

/** The known flag nearest to `name` (a prefix of it, or at most 2 edits away), or null. */
export function closest (name, known) {
  const distance = (a, b) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
    for (let j = 1; j <= b.length; j++) d[0][j] = j
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    return d[a.length][b.length]
  }
  let best = null
  let bestDistance = 3
  for (const k of known) {
    const dist = k.startsWith(name) || name.startsWith(k) ? 1 : distance(name, k)
    if (dist < bestDistance) { best = k; bestDistance = dist }
  }
  return best
}

/** A size in bytes: 40, 1k (1,000), 64k, 1m (1,000,000). */
export function sizeOption (v, name, usage) {
  const m = /^(\d+)([km]?)$/i.exec(v)
  if (m === null) throw new UsageError(`--${name} must be a size in bytes such as 40, 1k, 64k or 1m, got "${v}"\n\n${usage}`)
  return Number(m[1]) * ({ '': 1, k: 1000, m: 1000000 })[m[2].toLowerCase()]
}

/** A whole-number flag (`unit` names what it counts, for the message), or undefined. */
export function wholeOption (v, name, usage, unit = '') {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number${unit}, got "${v}"\n\n${usage}`)
  return n
}

/**
 * Flags not given on the command line from the environment: --max-queue from
 * ZEROMESH_MAX_QUEUE, and so on (flags win). --cluster-key is the exception: its variable,
 * ZEROMESH_CLUSTER_KEY, holds the key itself (see peerSecurity).
 */
export function fromEnvironment (values, flags, usage) {
  for (const [flag, spec] of Object.entries(flags)) {
    if (values[flag] !== undefined || flag === 'cluster-key') continue
    const name = envName(flag)
    const v = process.env[name]
    if (v === undefined || v === '') continue
    if (spec.type === 'boolean') {
      if (/^(1|true|yes)$/i.test(v)) values[flag] = true
      else if (!/^(0|false|no)$/i.test(v)) throw new UsageError(`${name} must be true or false, got "${v}"\n\n${usage}`)
    } else {
      values[flag] = v
    }
  }
  return values
}

/** The ZEROMESH_* variable a flag reads (--max-queue: ZEROMESH_MAX_QUEUE). */
export function envName (flag) {
  return `ZEROMESH_${flag.toUpperCase().replace(/-/g, '_')}`
}

/**
 * ZEROMESH_* variables of the environment that no flag of any command reads (`flags`: every
 * command's), each with the known name nearest to it or null: a misspelt one would otherwise
 * be ignored without a word.
 */
export function unknownEnvironment (flags, env = process.env) {
  const known = new Set(flags.map(envName))
  const out = []
  for (const name of Object.keys(env)) {
    if (!name.startsWith('ZEROMESH_') || known.has(name)) continue
    out.push([name, closest(name.slice(9), [...known].map((k) => k.slice(9)))])
  }
  return out.map(([name, near]) => [name, near === null ? null : `ZEROMESH_${near}`])
}

/**
 * --http [HOST:]PORT: loopback unless a host is given (a container binds 0.0.0.0:PORT), and
 * --http-view on|off: the live view at /, on by default on a loopback host only.
 */
export function httpOption (v, viewFlag, usage) {
  if (v === undefined) {
    if (viewFlag !== undefined) throw new UsageError(`--http-view goes with --http: the view is a page of the operations endpoint\n\n${usage}`)
    return null
  }
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(v)
  const port = m === null ? NaN : Number(m[2])
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--http must be PORT or HOST:PORT, such as 9090 or 0.0.0.0:9090, got "${v}"\n\n${usage}`)
  const host = m[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1'
  if (viewFlag !== undefined && viewFlag !== 'on' && viewFlag !== 'off') throw new UsageError(`--http-view must be on or off, got "${viewFlag}"\n\n${usage}`)
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host)
  return { host, port, view: viewFlag === undefined ? loopback : viewFlag === 'on' }
}

/** KEY=VALUE,KEY=VALUE as an object (--labels, --where), or undefined. */
export function labelsOption (v, flag, usage) {
  if (v === undefined) return undefined
  const out = {}
  for (const pair of v.split(',').map((x) => x.trim()).filter(Boolean)) {
    const i = pair.indexOf('=')
    if (i <= 0) throw new UsageError(`${flag} takes KEY=VALUE pairs, comma-separated, such as zone=a,tier=gold; got "${pair}"\n\n${usage}`)
    out[pair.slice(0, i)] = pair.slice(i + 1)
  }
  return out
}
