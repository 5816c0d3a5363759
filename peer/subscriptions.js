// What a peer subscribes to (PROTOCOL.md 4.11): a handler per event and group. A published
// event goes to one peer of each group that subscribes to it; a broadcast runs every
// subscription to the event on every peer. The groups: a subscription made through a
// contract the peer implements belongs to that contract's name (on(), runtime/contract.js);
// any other to the group given, or the event's own name by default, so subscribers that name
// no group share one delivery (as NATS's queue groups).
import { invalidArgument } from '../protocol/errors.js'
import { Limits } from '../protocol/constants.js'
import { isName } from '../protocol/events.js'
import { SUBSCRIPTION } from '../runtime/contract.js'

export class Subscriptions {
  constructor () {
    this.byEvent = new Map() // event -> Map(group -> handler)
  }

  get size () {
    let n = 0
    for (const groups of this.byEvent.values()) n += groups.size
    return n
  }

  /** Subscribes `handler` to `event` in `group` (replacing a handler of that event and group); returns whether what the peer states changed. */
  add (event, handler, group = event) {
    if (!isName(event)) throw invalidArgument(`subscribe(event, handler): event must be a string of 1 to ${Limits.maxEventLength} characters, got ${JSON.stringify(event)}`)
    if (!isName(group)) throw invalidArgument(`subscribe("${event}", handler, { group }): group must be a string of 1 to ${Limits.maxEventLength} characters, got ${JSON.stringify(group)}`)
    if (typeof handler !== 'function') throw invalidArgument(`subscribe("${event}", handler): handler must be a function (payload, ctx) => ...`)
    let groups = this.byEvent.get(event)
    if (groups === undefined) this.byEvent.set(event, groups = new Map())
    const had = groups.has(group)
    if (!had && this.size >= Limits.maxSubscriptions) throw invalidArgument(`a peer states at most ${Limits.maxSubscriptions} subscriptions (PROTOCOL.md 3.3)`)
    groups.set(group, handler)
    return !had
  }

  /** Drops the subscription of `event` in `group`; returns whether there was one. */
  remove (event, group = event) {
    const groups = this.byEvent.get(event)
    if (groups === undefined || !groups.delete(group)) return false
    if (groups.size === 0) this.byEvent.delete(event)
    return true
  }

  /** The handler of `event` in `group`, or undefined. */
  handler (event, group) {
    return this.byEvent.get(event)?.get(group)
  }

  /** The groups this peer subscribes to `event` in, with their handlers: [[group, handler], ...] ([] when none). */
  groupsOf (event) {
    const groups = this.byEvent.get(event)
    return groups === undefined ? [] : [...groups]
  }

  /** Every subscription as [event, group] (for the SERVICE answer, events.js). */
  pairs () {
    const out = []
    for (const [e, groups] of this.byEvent) for (const g of groups.keys()) out.push([e, g])
    return out
  }

  /** What this peer subscribes to, for an unknown subscription's message (at most 10 named). */
  text () {
    const pairs = this.pairs().map(([e, g]) => e === g ? e : `${e} (group ${g})`).sort()
    if (pairs.length === 0) return 'nothing'
    return pairs.length <= 10 ? pairs.join(', ') : `${pairs.slice(0, 10).join(', ')} and ${pairs.length - 10} more`
  }
}

/**
 * The subscriptions given as an option or a module's `events` export: `{ event: handler }`,
 * `{ event: { handler, group } }`, and subscriptions on() made (an array, or carried by
 * implement()'s result): [{ event, group, handler }] checked.
 */
export function subscriptionsOf (v, what) {
  if (v === undefined || v === null) return []
  if (Array.isArray(v)) {
    return v.map((s, i) => {
      if (s?.[SUBSCRIPTION] !== true) throw invalidArgument(`${what}[${i}] must be made by on(contract, event, handler)`)
      return { event: s.event, group: s.group, handler: s.handler }
    })
  }
  if (typeof v !== 'object') throw invalidArgument(`${what} must be { event: handler } or { event: { handler, group } }`)
  return Object.entries(v).map(([event, h]) => {
    if (typeof h === 'function') return { event, group: event, handler: h }
    if (h === null || typeof h !== 'object' || typeof h.handler !== 'function' || Object.keys(h).some((k) => k !== 'handler' && k !== 'group' && k !== 'eachThread')) {
      throw invalidArgument(`${what}["${event}"] must be a handler (payload, ctx) => ..., or { handler, group, eachThread }`)
    }
    if (h.eachThread !== undefined && typeof h.eachThread !== 'boolean') throw invalidArgument(`${what}["${event}"].eachThread must be true or false`)
    return { event, group: h.group ?? event, handler: h.handler, eachThread: h.eachThread === true }
  })
}
