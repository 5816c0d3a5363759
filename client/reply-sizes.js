// How large each method's replies are, as they arrive (bytes per reply, a moving average), so
// that a request whose replies are large leaves at once in a frame of its own instead of
// joining the other requests of its turn (transport/outbox.js). Coalescing saves a message a
// request, which is most of the cost when replies are small. When they are large it costs
// throughput: the peer gets the turn's requests together and answers them together, the
// callers then ask again together, and the two ends take turns instead of working at once
// (4 replies of 64 KB in flight: 0.44x raw zeromq.js's MB/s coalesced, 0.71x not;
// bench/RESULTS.md).

export const LARGE_REPLY_BYTES = 16384
const WEIGHT = 0.25 //     of a new reply in a method's average
const MAX_METHODS = 1024 // methods remembered; past it the memory starts again

export class ReplySizes {
  constructor () {
    this.bytes = new Map() // method -> average bytes per reply
  }

  /** A reply to a `method` request took about `bytes` of its frame. */
  observe (method, bytes) {
    const avg = this.bytes.get(method)
    if (avg === undefined) {
      if (this.bytes.size >= MAX_METHODS) this.bytes.clear()
      this.bytes.set(method, bytes)
    } else {
      this.bytes.set(method, avg + WEIGHT * (bytes - avg))
    }
  }

  /** Whether `method`'s replies are large: its requests then leave one to a frame, at once. */
  large (method) {
    const avg = this.bytes.get(method)
    return avg !== undefined && avg >= LARGE_REPLY_BYTES
  }
}
