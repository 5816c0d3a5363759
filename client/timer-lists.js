// Many timers on one clock timer, for the per-request deadlines and attempt limits. Timers
// with the same delay are kept in one linked list in the order they were added: a clock that
// only moves forward makes that their due order, so each list's head is its earliest. Adding
// or cancelling a timer is a few pointer writes: no Timeout object, closure or hash table
// per timer, nothing that grows with the length of the delay. One clock timer is armed for
// the earliest head. At steady load (answers long before their
// deadline) it wakes about once per delay, not once per request.

const KEEP_EMPTY_LISTS = 16 // an emptied list is kept for reuse while there are this few

/** One timer: a link in the list of its delay. */
class Timer {
  constructor (item, at, list) {
    this.item = item
    this.at = at
    this.list = list
    this.prev = null
    this.next = null
  }
}

/** The timers of one delay, oldest (earliest due) first. */
class List {
  constructor (delay) {
    this.delay = delay
    this.head = null
    this.tail = null
    this.size = 0
  }

  push (t) {
    t.prev = this.tail
    if (this.tail === null) this.head = t
    else this.tail.next = t
    this.tail = t
    this.size++
  }

  unlink (t) {
    if (t.prev === null) this.head = t.next
    else t.prev.next = t.next
    if (t.next === null) this.tail = t.prev
    else t.next.prev = t.prev
    t.prev = t.next = null
    t.list = null
    this.size--
  }
}

export class TimerLists {
  /**
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} clock
   * @param {(item: any) => void} onFire  called once for each item whose time came
   */
  constructor (clock, onFire) {
    this.clock = clock
    this.onFire = onFire
    this.lists = new Map() // delay (ms) -> List, in due order
    this.timer = null
    this.armedAt = Infinity
    this.firing = false
  }

  /**
   * Schedules `item` in `delay` ms (`now`: the clock's time, if the caller has it). Returns
   * the timer, which remove() takes.
   */
  add (item, delay, now = this.clock.now()) {
    const at = now + delay
    let list = this.lists.get(delay)
    if (list === undefined) this.lists.set(delay, list = new List(delay))
    const t = new Timer(item, at, list)
    list.push(t)
    if (at < this.armedAt && !this.firing) this.arm(at)
    return t
  }

  /** Cancels a timer add() returned (nothing happens if it fired or was cancelled). */
  remove (t) {
    const list = t.list
    if (list === null) return
    list.unlink(t)
    if (list.size === 0 && this.lists.size > KEEP_EMPTY_LISTS) this.lists.delete(list.delay)
  }

  arm (at) {
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.armedAt = at
    // At least 1 ms: the clock timer may come a little early, and this must never spin.
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(1, Math.ceil(at - this.clock.now())))
  }

  fire () {
    this.timer = null
    this.armedAt = Infinity
    this.firing = true
    try {
      const now = this.clock.now()
      for (const list of this.lists.values()) {
        while (list.head !== null && list.head.at <= now) {
          const t = list.head
          list.unlink(t)
          this.onFire(t.item)
        }
      }
    } finally {
      this.firing = false
      this.armNext()
    }
  }

  /** Arms the clock timer for the earliest timer left, if any. */
  armNext () {
    let next = Infinity
    for (const [delay, list] of this.lists) {
      if (list.head === null) {
        if (this.lists.size > KEEP_EMPTY_LISTS) this.lists.delete(delay)
        continue
      }
      if (list.head.at < next) next = list.head.at
    }
    if (next === Infinity) {
      if (this.timer !== null) this.clock.clearTimeout(this.timer)
      this.timer = null
      this.armedAt = Infinity
    } else if (next < this.armedAt || this.timer === null) {
      this.arm(next)
    }
  }

  /** Drops every timer. */
  clear () {
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timer = null
    this.armedAt = Infinity
    for (const list of this.lists.values()) {
      while (list.head !== null) list.unlink(list.head)
    }
    this.lists.clear()
  }

  get size () {
    let n = 0
    for (const list of this.lists.values()) n += list.size
    return n
  }
}
