// The work waiting for a worker thread, taken fairly across flows (flows.js): each flow's
// tasks wait in their own first-in first-out queue, and the flows with work waiting take turns,
// one task each (round robin), so a flow with 2 waiting no longer waits behind another's 30.
// As fq_codel does, a flow that had nothing here goes ahead of those that had work waiting
// all along: its task is next but for other such newcomers, first come first served among them,
// so a client calling once at a time waits for the task a thread runs, not for a round of the
// busy flows. A newcomer with more than one task waiting joins the round after its first. A
// flow with nothing waiting but work running (it holds places besides the task's, flows.js) is
// no newcomer: it joins the round, or a busy client whose queue here is short (maxQueueMs)
// would come back as a newcomer with each refill, ahead of the modest ones. A lone flow gets
// every turn: the queue stays work-conserving. Flows are entries of two lists
// linked through themselves (the newcomers, and the round), so a turn, a new flow and an
// emptied one cost O(1) whatever the number of flows.
import { Fifo } from './fifo.js'

export class FairQueue {
  constructor () {
    this.entries = new Map() // flow -> { tasks: Fifo, next, prev, fresh }, while it has tasks waiting
    this.fresh = { next: null, prev: null } // the newcomers, first come first: a list with a sentinel
    this.fresh.next = this.fresh.prev = this.fresh
    this.current = null //     the entry of the round whose turn is next
    this.length = 0
  }

  /** Queues `task` (its `flow`) last in its flow. */
  push (task) {
    let e = this.entries.get(task.flow)
    if (e === undefined) {
      if (task.flow.held > 1) this.joinRound(e = this.entry(task.flow))
      else e = this.newcomer(task.flow, false)
    }
    e.tasks.push(task)
    this.length++
  }

  /** Takes the next task in turn; undefined when empty. */
  shift () {
    const f = this.fresh.next
    if (f !== this.fresh) {
      const task = f.tasks.shift()
      this.length--
      unlink(f)
      if (f.tasks.length === 0) this.entries.delete(f.flow)
      else this.joinRound(f)
      return task
    }
    const e = this.current
    if (e === null) return undefined
    const task = e.tasks.shift()
    this.length--
    if (e.tasks.length === 0) this.leaveRound(e)
    else this.current = e.next
    return task
  }

  /** Puts `tasks` back in front, in their order: each first in its flow, and their flows next in turn, the first first. */
  unshiftAll (tasks) {
    for (let i = tasks.length - 1; i >= 0; i--) {
      const t = tasks[i]
      let e = this.entries.get(t.flow)
      if (e === undefined) {
        e = this.newcomer(t.flow, true)
      } else {
        if (e.fresh) unlink(e)
        else this.leaveRound(e)
        this.entries.set(t.flow, e)
        linkAfter(this.fresh, e)
        e.fresh = true
      }
      e.tasks.unshiftAll([t])
      this.length++
    }
  }

  /** Takes every task, in turn. */
  drain () {
    const out = []
    while (this.length > 0) out.push(this.shift())
    return out
  }

  /** A new entry for `flow`, in no list yet. */
  entry (flow) {
    const e = { flow, tasks: new Fifo(8), next: null, prev: null, fresh: false }
    this.entries.set(flow, e)
    return e
  }

  /** A new entry for `flow` among the newcomers: last of them, or first (`first`). */
  newcomer (flow, first) {
    const e = this.entry(flow)
    e.fresh = true
    linkAfter(first ? this.fresh : this.fresh.prev, e)
    return e
  }

  /** `e` joins the round, last in it (just before the entry whose turn is next). */
  joinRound (e) {
    e.fresh = false
    const c = this.current
    if (c === null) {
      e.next = e.prev = e
      this.current = e
    } else {
      linkAfter(c.prev, e)
    }
  }

  /** `e` leaves the round (emptied, or put first among the newcomers). */
  leaveRound (e) {
    if (e.next === e) this.current = null
    else if (this.current === e) this.current = e.next
    unlink(e)
    if (e.tasks.length === 0) this.entries.delete(e.flow)
  }
}

function linkAfter (at, e) {
  e.prev = at
  e.next = at.next
  at.next.prev = e
  at.next = e
}

function unlink (e) {
  e.prev.next = e.next
  e.next.prev = e.prev
  e.next = e.prev = null
}
