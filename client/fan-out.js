// What client.publish() and client.broadcast() hand their caller: one promise over several
// deliveries, each a call of the event kind (events.js) on the one lifecycle (calls.js).
//
// A publish makes one delivery per subscribing group (to one peer of it: balanced, retried
// elsewhere in the group after a lost connection or an attempt timeout, at least once while
// the publisher lives). It resolves with { delivered: [{ group, endpoint }] } once each group's
// handler finished ({ sent } when it asked for no ack: once each left), and rejects when any
// group's did not: with that group's error (the handler's RemoteError with its remoteCode, a
// TimeoutError, NoSubscribersError when the group had no subscriber up within the deadline),
// carrying `delivered` and `failed` ([{ group, endpoint, error }]) so the caller sees every
// group's outcome.
//
// A broadcast makes one delivery per peer that subscribes to the event, in any group, pinned
// to that peer. It resolves, never rejects for a peer's outcome, with each one: delivered;
// failed (the handler threw, or the peer refused it); or unreached (no ack before the
// deadline: frozen, partitioned, down, or dead by the member lists).
import {
  NoSubscribersError, TimeoutError, NoPeersError, ConnectionLostError, BusyError, DrainingError, HandshakeError, ClosedError,
} from '../protocol/errors.js'

/** Codes that say a delivery never reached its peer's handler (a broadcast's "unreached"; a gather's too). */
export const UNREACHED = new Set([TimeoutError, NoPeersError, ConnectionLostError, BusyError, DrainingError, HandshakeError, NoSubscribersError, ClosedError].map((e) => e.code))

export class Publish {
  /** @param {boolean} ack  whether its deliveries ask for an ack */
  constructor (ack) {
    this.ack = ack
    this.left = 0
    this.done = [] //   [{ group, endpoint }] of the deliveries that succeeded
    this.failedList = []
    this.promise = new Promise((resolve, reject) => { this.resolve = resolve; this.reject = reject })
  }

  /** `count` deliveries are under way. */
  expect (count) {
    this.left += count
  }

  /** A delivery is over: `err` null when its group's handler finished (or, with no ack, it left); `value`, what its ack carried. */
  delivered (call, err, value) {
    if (err === null) this.done.push(withThreads({ group: call.group, endpoint: call.repliedBy }, value))
    else this.failedList.push({ group: call.group, endpoint: call.repliedBy, error: err })
    if (--this.left === 0) this.finish()
  }

  /** The publish failed before any delivery was made (no subscriber within the deadline, an abort). */
  fail (err) {
    err.delivered = []
    err.failed = []
    this.reject(err)
  }

  finish () {
    const sort = (a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0)
    if (this.done.length > 1) this.done.sort(sort)
    if (this.failedList.length > 1) this.failedList.sort(sort)
    if (this.failedList.length === 0) return this.resolve(this.ack ? { delivered: this.done } : { sent: this.done })
    const err = this.failedList[0].error
    err.delivered = this.done
    err.failed = this.failedList
    this.reject(err)
  }
}

export class Broadcast {
  constructor () {
    this.left = 0
    this.out = { delivered: [], failed: [], unreached: [] }
    this.promise = new Promise((resolve, reject) => { this.resolve = resolve; this.reject = reject })
  }

  /** Subscribers the member lists show dead or left: unreached from the start. */
  unreached (gone) {
    this.out.unreached.push(...gone)
  }

  expect (count) {
    this.left += count
  }

  /** A delivery to `call.pin` is over. A peer that turned out to subscribe to nothing of it is left out. */
  delivered (call, err, value) {
    const endpoint = call.pin
    if (err === null) this.out.delivered.push(withThreads({ endpoint }, value))
    else if (err.notSubscriber !== true) {
      if (UNREACHED.has(err.code)) this.out.unreached.push({ endpoint, reason: err.message })
      else this.out.failed.push({ endpoint, error: err })
    }
    if (--this.left === 0) this.finish()
  }

  fail (err) {
    this.reject(err)
  }

  finish () {
    const sort = (a, b) => (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0)
    for (const list of Object.values(this.out)) list.sort(sort)
    if (this.out.delivered.length + this.out.failed.length + this.out.unreached.length === 0) {
      return this.reject(new NoSubscribersError('zeromesh: no peer subscribes to the event'))
    }
    this.resolve(this.out)
  }
}

/** The owner of a delivery that turned out to be wanted nowhere (a broadcast whose subscribers are all gone): it hears nothing. */
export const UNNEEDED = Object.freeze({ delivered () {}, fail () {} })

/** A delivery's outcome with `threads`, when its ack said how many threads ran it (PROTOCOL.md 4.11). */
function withThreads (d, value) {
  if (Number.isSafeInteger(value) && value >= 0) d.threads = value
  return d
}
