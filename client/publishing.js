// What client.publish() and client.broadcast() do before their deliveries: find who gets the
// event (the subscribing groups, or every subscribing peer), wait for one within the deadline
// when there is none yet, then make one call of the event kind (events.js) per delivery on the
// one lifecycle (calls.js), all owned by one fan-out (fan-out.js) that answers the caller.
import { Call } from './call.js'
import { msLeft } from './deadline.js'
import { Publish, Broadcast } from './fan-out.js'
import { Roster } from './roster.js'
import { NoSubscribersError, AbortError, invalidArgument } from '../protocol/errors.js'
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
   *   subscribersOf(event), learning(), reach(endpoint), called(key), and methodWaiters
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
    const deliver = (groups, now, opts = o) => {
      pub.expect(groups.length)
      for (const g of groups) this.deliver(pub, event, payload, opts, now, (call) => { call.group = g })
    }
    if (o.groups !== null) { deliver(o.groups, this.o.clock.now()); return pub.promise }
    const learnt = this.learnt(o)
    const found = () => { const g = view.groupsOf(event); return g.length > 0 && learnt() ? g : null }
    const now = found()
    if (now !== null) deliver(now, this.o.clock.now())
    else this.whenSubscribed(event, o, pub, found, deliver)
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
    const learnt = this.learnt(o)
    const found = () => { const s = view.subscribersOf(event); return s.targets.length + s.gone.length > 0 && learnt() ? s : null }
    const deliver = ({ targets, gone }, now, opts = o) => {
      const bc = new Broadcast(gone)
      bc.expect(targets.length)
      for (const ep of targets) {
        view.reach(ep) // a member outside the subset is connected for it
        this.deliver(bc, event, payload, opts, now, (call) => { call.group = null; call.pin = ep })
      }
      if (targets.length === 0) bc.finish()
      return bc.promise
    }
    const now = found()
    if (now !== null) return deliver(now, this.o.clock.now())
    const waiting = new Broadcast([])
    this.whenSubscribed(event, o, waiting, found, (s, t, opts) => deliver(s, t, opts).then((out) => waiting.resolve(out), (err) => waiting.reject(err)))
    return waiting.promise
  }

  /** The options of `what` (publish or broadcast) as `check` makes them, by the client's prologue. */
  admit (event, options, what, check) {
    return this.o.admit(event, options, check, what)
  }

  /**
   * Whether the client knows enough of who subscribes to deliver an event: it is no longer
   * learning the cluster (mesh.js learning()), or it has waited membersTimeout (at most the
   * event's deadline) for that; a fresh client would otherwise reach its seeds' groups alone.
   */
  learnt (o) {
    if (!this.o.view.learning()) return LEARNT
    const clock = this.o.clock
    const by = clock.now() + Math.min(o.timeout, this.o.membersTimeout)
    return () => !this.o.view.learning() || clock.now() >= by
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
   * No peer subscribes to `event` yet: `owner` waits for `found()` to give its subscribers
   * (looked at whenever the routes change), then `deliver(them, now)` goes on with the time
   * left; it fails with NoSubscribersError at the deadline, AbortError on an abort.
   */
  whenSubscribed (event, o, owner, found, deliver) {
    const clock = this.o.clock
    const t0 = clock.now()
    const watch = this.o.view.methodWaiters.watch(found, o.timeout, () => new NoSubscribersError(`zeromesh: no peer subscribed to "${event}" within ${o.timeout} ms`), Math.min(o.timeout, this.o.membersTimeout))
    const onAbort = () => watch.cancel(new AbortError(`zeromesh: event "${event}" was aborted`, { cause: o.signal.reason }))
    o.signal?.addEventListener('abort', onAbort, { once: true })
    if (o.signal?.aborted) onAbort()
    watch.promise.then((them) => {
      o.signal?.removeEventListener('abort', onAbort)
      const now = clock.now()
      deliver(them, now, { ...o, timeout: msLeft(t0 + o.timeout, o.timeout, now) })
    }, (err) => {
      o.signal?.removeEventListener('abort', onAbort)
      owner.fail(err)
    })
  }
}

const LEARNT = () => true

/** An event name given to publish() or broadcast(): 1 to Limits.maxEventLength characters. */
/** Throws when `event` is not an event's name (`what`: publish or broadcast, for the message). */
export function checkEvent (event, what) {
  if (!isName(event)) throw invalidArgument(`${what}(event, payload): event must be a string of 1 to ${Limits.maxEventLength} characters, got ${typeof event === 'string' ? JSON.stringify(event) : typeof event}`)
}
