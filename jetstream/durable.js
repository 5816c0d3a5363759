// What durableEvents() resolves with: the `durable` option a Peer and a Client take
// (runtime/durable-hook.js). On a Client (and a peer's own ctx.publish) it publishes the
// durable events; on a Peer it reads them: every subscription of the peer to a durable event
// is a pull of its group's durable consumer (consumer.js), inside the peer, so an event goes
// straight from JetStream to a peer that has a free place and nothing stands between.
import { ClosedError, invalidArgument } from '../protocol/errors.js'
import { DurableConnection } from './connection.js'
import { DurablePublisher } from './publisher.js'
import { GroupConsumer } from './consumer.js'
import { PullBudget } from './budget.js'
import { consumerName, subjectOf } from './names.js'

export class DurableEvents {
  #connection
  #publisher
  #consumers = []
  #budget = null
  #attached = false
  #closed = false
  #counts = { pulls: 0, received: 0, handled: 0, failed: 0, redelivered: 0, refused: 0, released: 0, deadLettered: 0, deadLetterErrors: 0, undecodable: 0, lost: 0, pullErrors: 0 }

  constructor (nats, options) {
    this.options = options
    this.events = options.events
    this.#connection = new DurableConnection(nats, options)
    this.#publisher = new DurablePublisher({ connection: this.#connection, options })
    this.names = new Set(options.events)
  }

  async open () {
    await this.#connection.open()
    return this
  }

  /** Whether `event` is durable: published to JetStream, never to the mesh. */
  owns (event) {
    return this.names.has(event)
  }

  /** Publishes durable `event`: resolves with { id, stream, seq, duplicate } once JetStream stored it. */
  publish (event, payload, options) {
    if (this.#closed) return Promise.reject(new ClosedError('zeromesh: durable events closed'))
    if (!this.owns(event)) return Promise.reject(invalidArgument(`"${event}" is not a durable event (durable events: ${this.events.join(', ')})`))
    return this.#publisher.publish(event, payload, options)
  }

  /** The name of the durable consumer `group` reads `event` through (names.js). */
  consumerName (group, event) {
    return consumerName(group, event)
  }

  /** The subject durable `event` is stored under. */
  subjectOf (event) {
    return subjectOf(this.options.subjects, event)
  }

  /** A Peer's subscriptions to durable events, read from their groups' consumers from now on. */
  async attach (host) {
    if (this.#attached) throw invalidArgument('this durableEvents() object is attached to a Peer already: make one per Peer (it may serve that peer\'s Clients too)')
    if (this.#closed) throw new ClosedError('zeromesh: durable events closed')
    this.#attached = true
    const o = this.options
    const subs = host.subscriptions()
    this.#budget = new PullBudget({ free: host.free, maxInflight: o.maxInflight })
    const share = () => Math.max(1, Math.ceil(this.#budget.room() / Math.max(1, this.#consumers.length)))
    for (const { event, group } of subs) {
      const name = consumerName(group, event)
      const ensure = () => this.#connection.ensureConsumer(name, subjectOf(o.subjects, event))
      this.#consumers.push(new GroupConsumer({ event, group, name, ensure, connection: this.#connection, options: o, host, budget: this.#budget, share, counts: this.#counts }))
    }
    // A consumer JetStream cannot make now (NATS away) is made once it can: the peer starts anyway.
    await Promise.all(this.#consumers.map((c) => c.start()))
    o.logger.info({ consumers: this.#consumers.map((c) => c.name) }, `durable events: reading ${this.#consumers.map((c) => `${c.event} (group ${c.group})`).join(', ') || 'nothing'} from stream ${o.stream}`)
  }

  /**
   * The Peer stops: no new pull, events that arrive are given back at once, the handlers
   * running finish and are acked; what still runs after `timeoutMs` is given back.
   */
  async drain (timeoutMs) {
    for (const c of this.#consumers) c.stop()
    this.#budget?.stop()
    const loops = Promise.all(this.#consumers.map((c) => c.loop))
    const idle = async () => {
      await loops
      await this.#budget?.idle()
    }
    let timer
    await Promise.race([idle(), new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs) })])
    clearTimeout(timer)
    for (const c of this.#consumers) c.release()
    await this.#connection.nc.flush().catch(() => {})
  }

  /** Counters: publishes (published, duplicates, failed, refused) and deliveries, for this process. */
  stats () {
    return {
      connected: this.#connection.up,
      publishes: { ...this.#publisher.counts, pending: this.#publisher.pending },
      deliveries: { ...this.#counts, running: this.#budget?.running ?? 0 },
      consumers: this.#consumers.map((c) => ({ event: c.event, group: c.group, name: c.name, reading: c.consumer !== null && !c.stopped })),
    }
  }

  /** Closes the NATS connection this made (one given in `connection` stays the caller's). Call it after peer.stop() and client.close(). */
  async close () {
    if (this.#closed) return
    this.#closed = true
    for (const c of this.#consumers) { c.stop(); c.release() }
    this.#budget?.stop()
    await this.#connection.close()
  }
}
