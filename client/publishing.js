// What client.publish() and client.broadcast() do before their deliveries: find who gets the
// event (the subscribing groups, or every subscribing peer), then make one call of the event
// kind (events.js) per delivery on the one lifecycle (calls.js), all owned by one fan-out
// (fan-out.js) that answers the caller. When there is none yet, the first delivery parks on
// the lifecycle until there is (its deadline, abort and timers are the lifecycle's).
import { Call } from './call.js'
import { msLeft } from './deadline.js'
import { Publish, Broadcast, UNNEEDED } from './fan-out.js'
import { Roster } from './roster.js'
import { NoSubscribersError, invalidArgument } from '../protocol/errors.js'
import { isName } from '../protocol/events.js'
import { Limits } from '../protocol/constants.js'

export class Publishing {
  /**
   * @param {object} o
   * @param {{ now(): number }} o.clock
   * @param {number} o.membersTimeout  how long a fresh client waits to learn who subscribes
   * @param {(given: object|undefined) => object} o.publishOptions  checks publish()'s options
   * @param {(given: object|undefined) => object} o.broadcastOptions  checks broadcast()'s options
   * @param {(event: string, options: object|undefined, check: Function, what: string) => object} o.admit  the client's one prologue (core.js admit()): the event's name, its options by `check`, the client's refusal
   * @param {() => number} o.newId  a call id
   * @param {object} o.kind  the event kind (events.js)
   * @param {(call: Call, now: number) => void} o.start  starts a call on the lifecycle
   * @param {object} o.view  what the mesh knows of subscribers (mesh.js): groupsOf(event),
   *   subscribersOf(event), learning(), reach(endpoint), called(key)
   */
  constructor (o) {
    this.o = o
  }

  /** client.publish() past the middleware: one delivery to one peer of each subscribing group. */
  publish (event, payload, options) {
    let o
    try {
      o = this.admit(event, options, 'publish', this.o.publishOptions)
    } catch (err) {
      return Promise.reject(err)
    }
    const view = this.o.view
    const pub = new Publish(o.ack)
    view.called(Roster.eventKey(event)) // the subset takes its subscribers in
    const deliver = (groups, now, opts) => {
      pub.expect(groups.length)
      for (const g of groups) this.deliver(pub, event, payload, opts, now, (call) => { call.group = g })
    }
    const now = this.o.clock.now()
    if (o.groups !== null) { deliver(o.groups, now, o); return pub.promise }
    const learnt = this.learnt(o, now)
    const found = (t) => { const g = view.groupsOf(event); return g.length > 0 && learnt(t) ? g : null }
    const groups = found(now)
    if (groups !== null) deliver(groups, now, o)
    else {
      this.whenSubscribed(event, payload, o, pub, found, learnt.at, (them, call, t) => {
        call.group = them[0]
        deliver(them.slice(1), t, { ...o, timeout: msLeft(call.deadline, o.timeout, t) })
        return true
      })
    }
    return pub.promise
  }

  /** client.broadcast() past the middleware: one delivery to every subscribing peer, each outcome reported. */
  broadcast (event, payload, options) {
    let o
    try {
      o = this.admit(event, options, 'broadcast', this.o.broadcastOptions)
    } catch (err) {
      return Promise.reject(err)
    }
    const view = this.o.view
    const now = this.o.clock.now()
    const learnt = this.learnt(o, now)
    const found = (t) => { const s = view.subscribersOf(event); return s.targets.length + s.gone.length > 0 && learnt(t) ? s : null }
    const bc = new Broadcast()
    const deliver = (targets, t, opts) => {
      bc.expect(targets.length)
      for (const ep of targets) {
        view.reach(ep) // a member outside the subset is connected for it
        this.deliver(bc, event, payload, opts, t, (call) => { call.group = null; call.pin = ep })
      }
    }
    const them = found(now)
    if (them !== null) {
      bc.unreached(them.gone)
      deliver(them.targets, now, o)
      if (them.targets.length === 0) bc.finish()
      return bc.promise
    }
    this.whenSubscribed(event, payload, o, bc, found, learnt.at, ({ targets, gone }, call, t) => {
      bc.unreached(gone)
      if (targets.length === 0) { call.owner = UNNEEDED; bc.expect(-1); bc.finish(); return false }
      view.reach(targets[0])
      call.group = null
      call.pin = targets[0]
      deliver(targets.slice(1), t, { ...o, timeout: msLeft(call.deadline, o.timeout, t) })
      return true
    })
    return bc.promise
  }

  /** The options of `what` (publish or broadcast) as `check` makes them, by the client's prologue. */
  admit (event, options, what, check) {
    return this.o.admit(event, options, check, what)
  }

  /**
   * Whether, at a time given, the client knows enough of who subscribes to deliver an event:
   * it is no longer learning the cluster (mesh.js learning()), or it has waited membersTimeout
   * (at most the event's deadline) since `now` for that; a fresh client would otherwise reach
   * its seeds' groups alone. Its `at`: when waiting makes it true.
   */
  learnt (o, now) {
    if (!this.o.view.learning()) return LEARNT
    const by = now + Math.min(o.timeout, this.o.membersTimeout)
    const test = (t) => !this.o.view.learning() || t >= by
    test.at = by
    return test
  }

  /** One delivery of `event` for fan-out `owner`, a call of the event kind on the lifecycle; `place` sets its group or pin. */
  deliver (owner, event, payload, o, now, place) {
    const call = new Call(this.o.kind, this.o.newId(), event, payload, o, now)
    call.ack = o.ack
    call.owner = owner
    place(call)
    this.o.start(call, now)
  }

  /**
   * No peer subscribes to `event` yet (or the client is still learning who does): the first
   * delivery starts on the lifecycle without a place, and parks there as any call with no peer
   * (calls.js place(): the lifecycle's one deadline, abort and timers), until `found(now)`
   * gives its subscribers; then `spread(them, call, now)` places it and starts the others with
   * the time left. At its deadline the fan-out fails NoSubscribersError, AbortError on an abort.
   */
  whenSubscribed (event, payload, o, owner, found, recheckAt, spread) {
    owner.expect(1)
    this.deliver(owner, event, payload, o, this.o.clock.now(), (call) => {
      call.group = null
      call.placing = {
        find: found,
        spread,
        recheckAt,
        timedOut: () => new NoSubscribersError(`zeromesh: no peer subscribed to "${event}" within ${o.timeout} ms`),
      }
    })
  }
}

const LEARNT = Object.assign(() => true, { at: -Infinity })

/** An event name given to publish() or broadcast(): 1 to Limits.maxEventLength characters. */
/** Throws when `event` is not an event's name (`what`: publish or broadcast, for the message). */
export function checkEvent (event, what) {
  if (!isName(event)) throw invalidArgument(`${what}(event, payload): event must be a string of 1 to ${Limits.maxEventLength} characters, got ${typeof event === 'string' ? JSON.stringify(event) : typeof event}`)
}
