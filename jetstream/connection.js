// The NATS connection durable events use, and what it needs in JetStream: the stream, the
// dead-letter stream, a durable consumer per (group, event). It follows the connection's state
// (connected, or reconnecting after NATS went away) so a publish fails at once while NATS is
// down, rather than wait in the client's reconnect buffer. Only JetStream features of
// nats-server 2.9 are used: one filter subject per consumer, pull consumers, NAK with a delay,
// +WPI (working), TERM.
import { DurableUnavailableError } from './errors.js'

const NS = 1e6 // nanoseconds a millisecond

export class DurableConnection {
  /**
   * @param {object} nats  loadNats()'s
   * @param {object} o  resolveDurableOptions()'s
   */
  constructor (nats, o) {
    this.nats = nats
    this.o = o
    this.nc = null
    this.own = false // this made the connection (and closes it), or the user gave it
    this.js = null
    this.jsm = null
    this.up = false
    this.statusLoop = null
    this.onUp = [] // resolvers waiting for the connection to come back
  }

  async open () {
    const { nats, o } = this
    if (o.connection !== null) this.nc = o.connection
    else {
      try {
        // noAsyncTraces: the NATS client would make two Errors (their stacks) for every request,
        // each publish included, a quarter of a publish's CPU; zeromesh's errors name the event instead.
        this.nc = await nats.connect({ servers: o.servers, timeout: o.connectTimeout, maxReconnectAttempts: -1, reconnectTimeWait: 500, name: 'zeromesh', noAsyncTraces: true })
      } catch (err) {
        throw new DurableUnavailableError(`zeromesh/jetstream: cannot connect to NATS at ${o.servers.join(', ')}: ${err.message}`, { cause: err })
      }
      this.own = true
    }
    this.up = !this.nc.isClosed()
    this.statusLoop = (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting') {
          if (this.up) o.logger.warn({ servers: o.servers }, 'NATS connection lost: durable publishes fail until it is back')
          this.up = false
        } else if (s.type === 'reconnect') {
          this.up = true
          o.logger.info({ server: this.nc.getServer() }, 'NATS connection back')
          for (const resolve of this.onUp.splice(0)) resolve()
        }
      }
    })().catch(() => {})
    this.nc.closed().then(() => { this.up = false; for (const resolve of this.onUp.splice(0)) resolve() })
    this.js = nats.jetstream(this.nc, { timeout: o.publishTimeout })
    try {
      this.jsm = await nats.jetstreamManager(this.nc, { timeout: o.connectTimeout })
      if (o.createStreams) {
        await this.ensureStream(o.stream, [`${o.subjects}.>`])
        await this.ensureStream(o.deadLetterStream, [`${o.deadSubjects}.>`])
      } else {
        await this.jsm.streams.info(o.stream)
        await this.jsm.streams.info(o.deadLetterStream)
      }
    } catch (err) {
      await this.close()
      if (err instanceof DurableUnavailableError) throw err
      throw new DurableUnavailableError(`zeromesh/jetstream: JetStream at ${o.servers.join(', ')} did not give streams ${o.stream} and ${o.deadLetterStream}: ${err.message}`, { cause: err })
    }
  }

  /** Makes stream `name` over `subjects` unless it is there (then it is used as it is). */
  async ensureStream (name, subjects) {
    const o = this.o
    try {
      await this.jsm.streams.info(name)
      return
    } catch (err) {
      if (!/not found/i.test(err.message)) throw err
    }
    try {
      await this.jsm.streams.add({
        name,
        subjects,
        storage: this.nats.StorageType.File,
        num_replicas: o.replicas,
        duplicate_window: o.duplicateWindow * NS,
        max_age: o.maxAge * NS,
      })
    } catch (err) {
      if (!/already in use|already exists/i.test(err.message)) throw err // another process made it first
    }
  }

  /**
   * The durable consumer `name` reading `subject`: made when missing (starting at `start`),
   * its ack wait, attempts and bound on events out brought to these options when it exists.
   */
  async ensureConsumer (name, subject) {
    const { o, nats } = this
    const config = {
      ack_policy: nats.AckPolicy.Explicit,
      ack_wait: o.ackWait * NS,
      // One more than maxDeliver: a delivery past maxDeliver means the last attempt's peer was
      // lost inside its handler; it goes to the dead letters unrun (consumer.js).
      max_deliver: o.maxDeliver + 1,
      max_ack_pending: o.maxAckPending,
      max_waiting: 512,
    }
    try {
      const info = await this.jsm.consumers.info(o.stream, name)
      if (info.config.ack_wait !== config.ack_wait || info.config.max_deliver !== config.max_deliver || info.config.max_ack_pending !== config.max_ack_pending) {
        await this.jsm.consumers.update(o.stream, name, { ack_wait: config.ack_wait, max_deliver: config.max_deliver, max_ack_pending: config.max_ack_pending })
      }
    } catch (err) {
      if (!/not found/i.test(err.message)) throw err
      try {
        await this.jsm.consumers.add(o.stream, {
          ...config,
          durable_name: name,
          filter_subject: subject,
          deliver_policy: o.start === 'all' ? nats.DeliverPolicy.All : nats.DeliverPolicy.New,
        })
      } catch (err2) {
        if (!/already (in use|exists)/i.test(err2.message)) throw err2
      }
    }
    return this.js.consumers.get(o.stream, name)
  }

  /** Resolves once connected again (or closed), or after `ms`. */
  whenUp (ms) {
    if (this.up || this.nc.isClosed()) return Promise.resolve()
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms)
      this.onUp.push(() => { clearTimeout(t); resolve() })
    })
  }

  async close () {
    if (this.nc === null || !this.own || this.nc.isClosed()) return
    await this.nc.drain().catch(() => this.nc.close())
  }
}
