// One stream's frames on their way out, in order and never dropped while the other side may
// still take them. A plain reply may be dropped when its pipe is full (its request times out
// and is tried again), but a stream's frames are a sequence: a frame that met a full pipe
// (EAGAIN) and were sent later would let the next one overtake it, and one dropped would lose
// items. So frames go to ZeroMQ one at a time; a full pipe holds the head (and everything
// behind it) and tries again every `retryMs`; past `giveUpMs` of no progress, or on any other
// error, the stream has lost its connection and `onFail` says so once. Memory: the frames held
// here are bounded by the stream's credit, a producer may wait on `bytes` (stream-producer), and
// `onBytes` tells an owner that caps what all its senders hold together (peer/streams.js).

const RETRY_MS = 2

export class OrderedSender {
  /**
   * @param {object} o
   * @param {(frames: Buffer[], done: (code: string|null) => void) => void} o.send  one message; done(null) once ZeroMQ took it
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {number} o.giveUpMs   how long a full pipe may hold the head before the stream gives up
   * @param {(code: string) => void} o.onFail  frames could not be sent (held ones are dropped)
   * @param {() => void} [o.onDrain] everything held has left
   * @param {(delta: number) => void} [o.onBytes] the bytes held changed by `delta` (queued: +, taken or dropped: -)
   */
  constructor (o) {
    this.o = o
    this.queue = [] //  messages (arrays of frames) not yet taken, head first
    this.bytes = 0 //   their size
    this.busy = false // the head is with ZeroMQ, or waits to be tried again
    this.since = 0 //   when the head first met a full pipe
    this.timer = null
    this.failed = false
  }

  /** Queues one message: `frame`, and the bulk frames that follow it (PROTOCOL.md 4.10), if any. */
  push (frame, bulk) {
    if (this.failed) return
    let msg = [frame]
    let bytes = frame.length
    if (bulk !== undefined && bulk.length > 0) {
      msg = [frame, ...bulk]
      for (let i = 0; i < bulk.length; i++) bytes += bulk[i].length
    }
    this.queue.push(msg)
    this.bytes += bytes
    this.o.onBytes?.(bytes)
    if (!this.busy) this.next()
  }

  next () {
    if (this.failed || this.queue.length === 0) { this.busy = false; return }
    this.busy = true
    const head = this.queue[0]
    this.o.send(head, (code) => {
      if (this.failed) return
      if (code === null) {
        this.queue.shift()
        let taken = 0
        for (let i = 0; i < head.length; i++) taken += head[i].length
        this.bytes -= taken
        this.o.onBytes?.(-taken)
        this.since = 0
        if (this.queue.length === 0) { this.busy = false; this.o.onDrain?.(); return }
        return this.next()
      }
      const now = this.o.clock.now()
      if (code === 'EAGAIN') {
        if (this.since === 0) this.since = now
        if (now - this.since < this.o.giveUpMs) {
          this.timer = this.o.clock.setTimeout(() => { this.timer = null; this.next() }, RETRY_MS)
          return
        }
      }
      this.fail(code)
    })
  }

  fail (code) {
    this.close()
    this.o.onFail(code)
  }

  /** Drops whatever is held; nothing more is sent. */
  close () {
    if (this.failed) return
    this.failed = true
    this.busy = false
    this.queue = []
    if (this.bytes !== 0) this.o.onBytes?.(-this.bytes)
    this.bytes = 0
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer)
    this.timer = null
  }
}
