// What a client asks a peer for its caller (Client.members, Client.describe): the peer's
// member list, or what it serves. Each connects to the peer if need be and waits for it to
// come up (or refuse) within the client's timeout.
//
// Both take `o`: { table, clock, timeout, membersTimeout, random, closed(), connect(endpoint)
// (a PeerEntry, or undefined when refused), fetchList(endpoint) (a member list, or null) }.
import { allRefused, refusalError } from './refusals.js'
import { ClosedError, TimeoutError, NoPeersError } from '../protocol/errors.js'
import { normalizeRemote } from '../protocol/endpoint.js'
import { memberStateNames } from '../protocol/constants.js'

export async function askMembers (c, from) {
  if (c.closed()) throw new ClosedError('zeromesh: the client is closed')
  let endpoint
  if (from === undefined) {
    await until(c, () => c.table.up().length > 0 || allRefused(c.table))
    const up = c.table.up()
    if (up.length === 0 && allRefused(c.table)) throw refusalError(c.table)
    if (up.length === 0) throw new NoPeersError(`zeromesh: no peer reachable within ${c.timeout} ms to ask for members`)
    endpoint = up[Math.floor(c.random() * up.length)].endpoint
  } else {
    endpoint = normalizeRemote(from, 'from')
    if (c.table.get(endpoint) === undefined && c.connect(endpoint) === undefined) throw new NoPeersError(`zeromesh: cannot connect to ${endpoint}`)
    await until(c, () => c.table.get(endpoint)?.state === 'up' || c.table.get(endpoint)?.refusal != null)
    const refusal = c.table.get(endpoint)?.refusal
    if (refusal != null && c.table.get(endpoint)?.state !== 'up') throw refusal
    if (c.table.get(endpoint)?.state !== 'up') throw new NoPeersError(`zeromesh: ${endpoint} not reachable within ${c.timeout} ms`)
  }
  const list = await c.fetchList(endpoint)
  if (list === null) throw new TimeoutError(`zeromesh: ${endpoint} sent no member list within ${c.membersTimeout} ms`)
  return list.members.map((m) => ({ endpoint: m.endpoint, state: memberStateNames[m.state] ?? 'unknown', incarnation: m.incarnation, meta: m.meta, service: m.service ?? null }))
}

export async function askService (c, endpoint) {
  if (c.closed()) throw new ClosedError('zeromesh: the client is closed')
  const ep = normalizeRemote(endpoint, 'endpoint')
  if (c.table.get(ep) === undefined && c.connect(ep) === undefined) throw new NoPeersError(`zeromesh: cannot connect to ${ep}`)
  await until(c, () => c.table.get(ep)?.service != null || c.table.get(ep)?.refusal != null)
  const peer = c.table.get(ep)
  if (peer?.service == null) throw peer?.refusal ?? new TimeoutError(`zeromesh: ${ep} did not say what it serves within ${c.timeout} ms`)
  return peer.snapshot().service
}

/** Resolves once `cond()` holds, the client's timeout passes, or the client closes. */
async function until (c, cond) {
  const deadline = c.clock.now() + c.timeout
  while (!cond() && c.clock.now() < deadline && !c.closed()) {
    await new Promise((resolve) => c.clock.setTimeout(resolve, 10))
  }
}
