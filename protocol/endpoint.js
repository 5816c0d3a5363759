// Endpoint strings: checks, the normal form used as a peer's identity, and what to bind.
// A peer's routing id is its advertised endpoint, so clients and peers must spell an
// endpoint the same way: `localhost` is written 127.0.0.1 everywhere.
import os from 'node:os'
import { invalidArgument } from './errors.js'

const TCP = /^tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s[\]]+|\*):(\d{1,5}|\*)$/

/** Checks an endpoint a client or peer will connect to, and returns its normal form. */
export function normalizeEndpoint (ep, what = 'endpoint') {
  if (typeof ep !== 'string' || ep.length === 0) throw invalidArgument(`${what} must be a string such as "tcp://127.0.0.1:5555", got ${describe(ep)}`)
  if (ep.startsWith('ipc://') || ep.startsWith('inproc://')) {
    if (ep.length <= ep.indexOf('//') + 2) throw invalidArgument(`${what} ${JSON.stringify(ep)} has no name`)
    return checkLength(ep, what)
  }
  const m = TCP.exec(ep)
  if (m === null) throw invalidArgument(`${what} ${JSON.stringify(ep)} is not tcp://HOST:PORT, ipc://PATH or inproc://NAME`)
  const host = m[1] === 'localhost' ? '127.0.0.1' : m[1]
  const port = m[2]
  if (port !== '*' && Number(port) > 65535) throw invalidArgument(`${what} ${JSON.stringify(ep)} has a port above 65535`)
  return checkLength(`tcp://${host}:${port}`, what)
}

/** A connectable endpoint: no wildcard host or port. */
export function normalizeRemote (ep, what) {
  const n = normalizeEndpoint(ep, what)
  if (n.startsWith('tcp://') && (n.includes('://*:') || n.endsWith(':*') || n.endsWith(':0') || n.includes('://0.0.0.0:'))) {
    throw invalidArgument(`${what} ${JSON.stringify(ep)} is not an address to connect to (wildcard host or port)`)
  }
  return n
}

/**
 * What to hand to bind(): port 0 becomes ZeroMQ's ephemeral "*".
 * @returns {{ bindTo: string, wildcardHost: boolean }}
 */
export function bindSpec (ep) {
  const n = normalizeEndpoint(ep, 'bind')
  if (!n.startsWith('tcp://')) return { bindTo: n, wildcardHost: false }
  const m = TCP.exec(n)
  const host = m[1]
  const port = m[2] === '0' ? '*' : m[2]
  return { bindTo: `tcp://${host}:${port}`, wildcardHost: host === '*' || host === '0.0.0.0' || host === '[::]' }
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

/** The port of a tcp endpoint, or null. */
export function portOf (ep) {
  const m = TCP.exec(ep)
  return m === null ? null : Number(m[2])
}

function checkLength (ep, what) {
  // A routing id is at most 255 bytes: a peer's is its endpoint, and a connection's alias is
  // the endpoint with "#n" appended (protocol/socket-settings.js), so endpoints stop at 240.
  if (Buffer.byteLength(ep) > MAX_ENDPOINT_BYTES) throw invalidArgument(`${what} is longer than ${MAX_ENDPOINT_BYTES} bytes`)
  return ep
}

export const MAX_ENDPOINT_BYTES = 240

function describe (v) {
  return v === undefined ? 'undefined' : JSON.stringify(v) ?? String(v)
}
