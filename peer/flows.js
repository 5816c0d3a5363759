// The flows that share a busy peer (docs/guides/deploying.md, "Sharing a busy peer"): a
// flow is the work of one client connection by default, or of every request naming the same
// value in one header (`flowHeader`, such as 'x-tenant' set by a client middleware), across
// connections. Each flow counts the places it holds (admission.js: its share when the peer is
// full) and, on a peer with worker threads, queues its waiting work apart (fair-queue.js: taken
// round robin across flows). Header flows are kept in a table bounded like the connections':
// past MAX_FLOWS the idle ones are forgotten.

const MAX_FLOWS = 4096

export class Flow {
  constructor (key) {
    this.key = key
    this.held = 0 // places it holds now (requests running or queued, streams open)
  }
}

export class Flows {
  /** @param {{ header: string|null }} o  the header whose value names a request's flow, or null: its connection */
  constructor ({ header = null } = {}) {
    this.header = header
    this.byKey = new Map() // header value -> Flow
    this.overflow = null //   the one flow of every header value past MAX_FLOWS, made when first needed
  }

  /** The flow of work from `conn` with `headers` (a request's, or null). */
  of (conn, headers) {
    if (this.header !== null) {
      const v = headers?.[this.header]
      if (typeof v === 'string') return this.named(v)
    }
    return (conn.flow ??= new Flow(conn.key))
  }

  named (value) {
    let f = this.byKey.get(value)
    if (f === undefined) {
      if (this.byKey.size >= MAX_FLOWS) this.sweep()
      if (this.byKey.size >= MAX_FLOWS) return this.overflow ??= new Flow('\0overflow') // every flow busy: the rest share one
      this.byKey.set(value, f = new Flow(value))
    }
    return f
  }

  /** Forgets the header flows that hold nothing. */
  sweep () {
    for (const [k, f] of this.byKey) if (f.held === 0) this.byKey.delete(k)
  }
}

/** The flow of work with no connection (the peer's own, a test's): one for all of it. */
export const NO_FLOW = new Flow('\0none')
