// Many timers on one clock timer, for the per-request deadlines and attempt limits: timers
// are grouped by the millisecond they are due in (a slot, a Set of items), and one clock
// timer is armed for the earliest slot. Adding or removing a timer is a Set operation, with
// no Timeout object or closure per timer; a slot whose items were all removed is dropped at
// once, so at steady load (requests answered long before their deadline) the clock timer
// wakes about once per timeout, not once per request.

export class TimerWheel {
  /**
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} clock
   * @param {(item: any) => void} onFire  called once for each item whose time came
   */
  constructor (clock, onFire) {
    this.clock = clock
    this.onFire = onFire
    this.slots = new Map() // slot (ms, rounded up) -> Set of items due then
    this.heap = [] //         slot numbers, a min-heap; may hold slots already emptied
    this.timer = null
    this.armedAt = Infinity
    this.firing = false
  }

  /** Schedules `item` for time `at` (clock ms). Returns its slot, which remove() needs. */
  add (item, at) {
    const slot = Math.ceil(at)
    let set = this.slots.get(slot)
    if (set === undefined) {
      this.slots.set(slot, set = new Set())
      this.push(slot)
      if (slot < this.armedAt && !this.firing) this.arm(slot)
    }
    set.add(item)
    return slot
  }

  /** Cancels `item`, scheduled in `slot`. */
  remove (item, slot) {
    const set = this.slots.get(slot)
    if (set === undefined) return
    set.delete(item)
    if (set.size === 0) this.slots.delete(slot)
  }

  arm (slot) {
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.armedAt = slot
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, slot - this.clock.now()))
  }

  fire () {
    this.timer = null
    this.armedAt = Infinity
    this.firing = true
    try {
      const now = this.clock.now()
      while (this.heap.length > 0 && this.heap[0] <= now) {
        const slot = this.pop()
        const set = this.slots.get(slot)
        if (set === undefined) continue
        this.slots.delete(slot)
        for (const item of set) this.onFire(item)
      }
    } finally {
      this.firing = false
      this.armNext()
    }
  }

  /** Arms the clock timer for the earliest slot still holding items, if any. */
  armNext () {
    while (this.heap.length > 0 && !this.slots.has(this.heap[0])) this.pop()
    if (this.heap.length === 0) {
      if (this.timer !== null) this.clock.clearTimeout(this.timer)
      this.timer = null
      this.armedAt = Infinity
      return
    }
    // Slots emptied and refilled leave duplicates behind: rebuild before the heap outgrows the slots.
    if (this.heap.length > 2 * this.slots.size + 64) {
      this.heap = [...this.slots.keys()].sort((a, b) => a - b)
    }
    // Due already (the clock timer came a little early): at least 1 ms, so this never spins.
    const next = Math.max(this.heap[0], this.clock.now() + 1)
    if (next < this.armedAt || this.timer === null) this.arm(next)
  }

  /** Drops every timer. */
  clear () {
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timer = null
    this.armedAt = Infinity
    this.slots.clear()
    this.heap = []
  }

  get size () {
    let n = 0
    for (const set of this.slots.values()) n += set.size
    return n
  }

  push (slot) {
    const h = this.heap
    let i = h.length
    h.push(slot)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (h[parent] <= slot) break
      h[i] = h[parent]
      i = parent
    }
    h[i] = slot
  }

  pop () {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (h.length > 0) {
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        if (l >= h.length) break
        const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l
        if (h[c] >= last) break
        h[i] = h[c]
        i = c
      }
      h[i] = last
    }
    return top
  }
}
