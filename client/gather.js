// client.gather(): a scatter-gather request. One request of a method to every peer that
// serves it (connected or not: a member outside the subset is dialled for it), each pinned to
// its peer, under one deadline; the outcome reported peer by peer as broadcast() reports an
// event's: replies, failed (the handler threw, the input was refused), unreached (no answer
// before the deadline, the connection lost, busy or draining to the end).
import { NoPeersError } from '../protocol/errors.js'
import { UNREACHED } from './fan-out.js'
import { msLeft } from './deadline.js'

export class Gather {
  /**
   * @param {object} o
   * @param {{ now(): number }} o.clock
   * @param {number} o.timeout           the client's timeout, the default
   * @param {number} o.membersTimeout    the longest wait for the member lists before the peers known are taken as all
   * @param {{ serversOf(method: string): string[], learning(): boolean, reach(endpoint: string): void, methodWaiters: { watch: Function } }} o.view
   * @param {(method: string, args: unknown, options: object, pin: string) => Promise<unknown>} o.request  a request pinned to one peer
   */
  constructor (o) {
    this.o = o
  }

  /**
   * Resolves with the endpoints of the peers that serve `method`, once this client knows
   * them: it is no longer learning the cluster, or it waited membersTimeout (at most
   * `timeout`); rejects with NoPeersError when none serves it within `timeout`.
   */
  servers (method, timeout) {
    const { view, clock } = this.o
    const by = clock.now() + Math.min(timeout, this.o.membersTimeout)
    const found = () => {
      const them = view.serversOf(method)
      return them.length > 0 && (!view.learning() || clock.now() >= by) ? them : null
    }
    const now = found()
    if (now !== null) return Promise.resolve(now)
    return view.methodWaiters.watch(found, timeout, () => new NoPeersError(`zeromesh: no peer serving "${method}" was up within ${timeout} ms`), Math.min(timeout, this.o.membersTimeout)).promise
  }

  /** client.gather(method, args, options): every serving peer's outcome, sorted by endpoint. */
  async gather (method, args, options) {
    const { clock } = this.o
    const timeout = options?.timeout ?? this.o.timeout
    const t0 = clock.now()
    const targets = await this.servers(method, timeout)
    const o = { ...options, timeout: msLeft(t0 + timeout, timeout, clock.now()) }
    const out = { replies: [], failed: [], unreached: [] }
    await Promise.all(targets.map((endpoint) => {
      this.o.view.reach(endpoint)
      return this.o.request(method, args, o, endpoint).then(
        (value) => { out.replies.push({ endpoint, value }) },
        (error) => {
          if (UNREACHED.has(error?.code)) out.unreached.push({ endpoint, reason: error.message })
          else out.failed.push({ endpoint, error })
        },
      )
    }))
    const byEndpoint = (a, b) => (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0)
    for (const list of Object.values(out)) list.sort(byEndpoint)
    return out
  }
}
