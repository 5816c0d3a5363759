// Endpoint strings: one strict grammar (PROTOCOL.md 1.1) for every endpoint zeromesh meets,
// whether a user typed it (--bind, --seeds, advertise) or it came off the wire (gossip claims,
// member lists, probe requests). Anything parseEndpoint accepts as connectable, ZeroMQ's
// connect() accepts too (test/integration/endpoint.test.js holds the two to each other), so a hostile
// frame can never make a peer or a client throw inside ZeroMQ.
//
// A peer's routing id is its advertised endpoint, so clients and peers must spell an endpoint
// the same way: the normal form writes `localhost` as 127.0.0.1 and nothing else differs.
import os from 'node:os'
import net from 'node:net'
import { invalidArgument } from './errors.js'

/** Longest endpoint: a connection's alias is the endpoint plus "#n", and a routing id is <= 255 bytes. */
export const MAX_ENDPOINT_BYTES = 240
/** Longest ipc path: sockaddr_un's sun_path less its terminating NUL (ZeroMQ refuses longer). */
export const MAX_IPC_PATH_BYTES = 107

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/
const DOTTED = /^[0-9.]+$/
const PORT = /^(?:0|[1-9][0-9]{0,4})$/
const CONTROL = /[\u0000-\u001f\u007f]/ // eslint-disable-line no-control-regex

/**
 * Parses an endpoint. Returns `{ endpoint, transport, host, port, wildcard }` with `endpoint`
 * in normal form, or `{ error }` saying what is wrong. With `bind`, a wildcard host (`*`,
 * 0.0.0.0, [::]) and port 0 or `*` are allowed; without it the endpoint must be one to
 * connect to. Never throws.
 */
export function parseEndpoint (ep, { bind = false } = {}) {
  if (typeof ep !== 'string' || ep.length === 0) return { error: 'is not a non-empty string' }
  if (ep.length > MAX_ENDPOINT_BYTES || Buffer.byteLength(ep) > MAX_ENDPOINT_BYTES) return { error: `is longer than ${MAX_ENDPOINT_BYTES} bytes` }
  if (CONTROL.test(ep)) return { error: 'has a control character' }
  const sep = ep.indexOf('://')
  const scheme = sep < 0 ? '' : ep.slice(0, sep)
  const rest = sep < 0 ? '' : ep.slice(sep + 3)
  if (scheme === 'ipc') {
    if (rest.length === 0 || rest === '@') return { error: 'has no path' }
    if (Buffer.byteLength(rest) > MAX_IPC_PATH_BYTES) return { error: `has an ipc path longer than ${MAX_IPC_PATH_BYTES} bytes` }
    if (rest === '*' && !bind) return { error: 'is not an address to connect to (wildcard ipc path)' }
    return { endpoint: ep, transport: 'ipc', host: null, port: null, wildcard: rest === '*' }
  }
  if (scheme === 'inproc') {
    if (rest.length === 0) return { error: 'has no name' }
    return { endpoint: ep, transport: 'inproc', host: null, port: null, wildcard: false }
  }
  if (scheme !== 'tcp') return { error: 'is not tcp://HOST:PORT, ipc://PATH or inproc://NAME' }
  const colon = rest.lastIndexOf(':')
  if (colon <= 0) return { error: 'has no :PORT' }
  let host = rest.slice(0, colon)
  const portText = rest.slice(colon + 1)
  let port
  if (portText === '*') {
    if (!bind) return { error: 'is not an address to connect to (wildcard port)' }
    port = 0
  } else {
    if (!PORT.test(portText)) return { error: 'has a port that is not a number from 1 to 65535' }
    port = Number(portText)
    if (port > 65535) return { error: 'has a port above 65535' }
    if (port === 0 && !bind) return { error: 'is not an address to connect to (port 0)' }
  }
  let wildcard = false
  if (host === 'localhost') host = '127.0.0.1'
  if (host.startsWith('[')) {
    if (!host.endsWith(']') || !net.isIPv6(host.slice(1, -1))) return { error: 'has a bracketed host that is not an IPv6 address' }
    wildcard = host === '[::]'
  } else if (host === '*') {
    wildcard = true
  } else if (DOTTED.test(host)) {
    if (!net.isIPv4(host)) return { error: 'has a host that is not a valid IPv4 address' }
    wildcard = host === '0.0.0.0'
  } else if (!isHostname(host)) {
    return { error: 'has a host that is not a DNS name (letters, digits, hyphens and dots), an IPv4 address or a bracketed IPv6 address' }
  }
  if (wildcard && !bind) return { error: 'is not an address to connect to (wildcard host)' }
  const endpoint = `tcp://${host}:${portText}`
  if (Buffer.byteLength(endpoint) > MAX_ENDPOINT_BYTES) return { error: `is longer than ${MAX_ENDPOINT_BYTES} bytes` }
  return { endpoint, transport: 'tcp', host, port, wildcard }
}

function isHostname (host) {
  if (host.length > 253) return false
  const labels = host.endsWith('.') ? host.slice(0, -1).split('.') : host.split('.')
  for (const l of labels) if (!LABEL.test(l)) return false
  return true
}

/**
 * Whether `v`, as it came off the wire, is a connectable endpoint already in normal form:
 * the check every endpoint in a frame passes before anything uses it.
 */
export function isWireEndpoint (v) {
  // Every gossip message and member list names the same few endpoints again and again: one
  // already found good is not parsed again (at 1,000 members parsing was 15% of a peer's
  // gossip CPU). Strings are values: a string equal to a good one is as good.
  if (typeof v === 'string' && wireEndpoints.has(v)) return true
  const p = parseEndpoint(v)
  const ok = p.error === undefined && p.endpoint === v
  if (ok) {
    if (wireEndpoints.size >= MAX_REMEMBERED) wireEndpoints.clear()
    wireEndpoints.add(v)
  }
  return ok
}

const MAX_REMEMBERED = 8192 // good endpoints remembered at most (a flood of made-up ones starts it over)
const wireEndpoints = new Set()

/** Checks an endpoint to bind and returns its normal form (wildcards and port 0 allowed). */
export function normalizeEndpoint (ep, what = 'endpoint') {
  return checked(ep, what, true).endpoint
}

/** Checks an endpoint to connect to and returns its normal form. */
export function normalizeRemote (ep, what = 'endpoint') {
  return checked(ep, what, false).endpoint
}

function checked (ep, what, bind) {
  const p = parseEndpoint(ep, { bind })
  if (p.error !== undefined) {
    const shown = typeof ep === 'string' ? JSON.stringify(ep.length > 300 ? `${ep.slice(0, 300)}...` : ep) : describe(ep)
    throw invalidArgument(`${what} ${shown} ${p.error}; use tcp://HOST:PORT (such as "tcp://127.0.0.1:5555"), ipc://PATH or inproc://NAME`)
  }
  return p
}

/**
 * What to hand to bind(): port 0 becomes ZeroMQ's ephemeral "*".
 * @returns {{ bindTo: string, wildcardHost: boolean }}
 */
export function bindSpec (ep) {
  const p = checked(ep, 'bind', true)
  if (p.transport !== 'tcp') return { bindTo: p.endpoint, wildcardHost: false }
  return { bindTo: `tcp://${p.host}:${p.port === 0 ? '*' : p.port}`, wildcardHost: p.wildcard }
}

/** The endpoint to advertise for a wildcard bind: the first external IPv4 address. */
export function defaultAdvertiseHost () {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  }
  return '127.0.0.1'
}

/** A seed list: an array or comma-separated string of connectable endpoints, deduplicated. */
export function seedList (v, name = 'seeds') {
  if (v === undefined) return []
  if (typeof v === 'string') v = v.split(',').map((s) => s.trim()).filter(Boolean)
  if (!Array.isArray(v)) throw invalidArgument(`${name} must be an array of endpoints such as ["tcp://127.0.0.1:5555"]`)
  return [...new Set(v.map((s, i) => normalizeRemote(s, `${name}[${i}]`)))]
}

/**
 * Whether traffic to or from `ep` stays on this machine: ipc, inproc, and tcp on 127.0.0.0/8,
 * [::1] or [::ffff:127.0.0.0/104] (localhost is written 127.0.0.1). Wildcards and host names
 * are not loopback.
 */
export function isLoopback (ep) {
  const p = parseEndpoint(ep, { bind: true })
  if (p.error !== undefined) return false
  if (p.transport !== 'tcp') return true
  if (p.host.startsWith('[')) {
    const addr = p.host.slice(1, -1).replace(/%.*$/, '') // a zone id says which link, not which address
    return net.isIPv6(addr) && LOOPBACK.check(addr, 'ipv6')
  }
  // net.isIPv4 admits only dotted decimal without leading zeros, so 127.0.0.0/8 is its prefix
  // (BlockList.check builds a SocketAddress a call, and member lists ask this of every member)
  return net.isIPv4(p.host) && p.host.startsWith('127.')
}

// ::1 and IPv4-mapped 127.0.0.0/8 (::ffff:127.0.0.0/104), in any spelling.
const LOOPBACK = new net.BlockList()
LOOPBACK.addAddress('::1', 'ipv6')
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6')

/** The port of a tcp endpoint, or null. */
export function portOf (ep) {
  const p = parseEndpoint(ep, { bind: true })
  return p.transport === 'tcp' ? p.port : null
}

/** The host of a tcp endpoint ("tcp://10.0.0.1:5555" -> "10.0.0.1", an IPv6 one in brackets); any other endpoint is its own. */
export function hostOf (ep) {
  const p = parseEndpoint(ep, { bind: true })
  return p.transport === 'tcp' ? p.host : ep
}

function describe (v) {
  return v === undefined ? 'undefined' : JSON.stringify(v) ?? String(v)
}
