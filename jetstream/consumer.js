// One peer's reading of one group's durable consumer (a group and one of its events): pull
// what the peer's places allow (budget.js), hand each event to the peer (its admission, its
// dispatch: peer/durable-host.js), then ack it once the handler succeeded, or give it back
// with a delay (backoff) when the handler threw or ran past `timeout`, or store it as a dead
// letter once maxDeliver attempts failed. While a handler runs the peer tells JetStream it is
// working (+WPI every ackWait / 3), so a slow handler keeps its event while a lost peer's
// events go to another peer after ackWait.
import { decodeEvent, Header } from './codec.js'
import { DeadCode } from './errors.js'
import { deadLetter } from './dead-letter.js'
import { UnknownMethodError } from '../protocol/errors.js'

const PULL_EXPIRES_MS = 3000 // an open pull lasts this long: what a drain may wait for the last one
const RETRY_MS = 1000 //        after a failed pull (NATS away), the next one
const REFUSED_DELAY_MS = 100 // an event the peer refused (busy past what the pull saw): back to the group after this

export class GroupConsumer {
  /**
   * @param {object} o
   * @param {string} o.event
   * @param {string} o.group
   * @param {string} o.name  the consumer's durable name (names.js consumerName)
   * @param {() => Promise<object>} o.ensure  makes (or finds) the durable consumer: the @nats-io/jetstream Consumer
   * @param {import('./connection.js').DurableConnection} o.connection
   * @param {object} o.options
   * @param {object} o.host  the peer's (peer/durable-host.js)
   * @param {import('./budget.js').PullBudget} o.budget
   * @param {() => number} o.share  what one pull may ask for
   * @param {object} o.counts  the peer's durable counters, shared by its consumers
   */
  constructor (o) {
    Object.assign(this, { event: o.event, group: o.group, name: o.name, ensure: o.ensure, connection: o.connection, options: o.options, host: o.host, budget: o.budget, share: o.share, counts: o.counts })
    this.stopped = false
    this.running = new Set() // the deliveries handed to the peer and not settled: { m, settle, started, heard, onTimeout }
    this.sweep = null // the timer of startSweep()
    this.loop = null
    this.consumer = null
  }

  /** Starts reading; resolves once the consumer was made, or its first making failed (then it is tried again every RETRY_MS, and read once made). */
  start () {
    let first
    const tried = new Promise((resolve) => { first = resolve })
    this.loop = this.pullLoop(first)
    return tried
  }

  async pullLoop (tried) {
    const stopped = () => this.stopped
    while (this.consumer === null && !this.stopped) {
      try {
        this.consumer = await this.ensure()
      } catch (err) {
        this.counts.pullErrors++
        this.options.logger.error({ event: this.event, group: this.group, consumer: this.name, err: err?.message }, `durable consumer ${this.name} not made (${err?.message}): again in ${RETRY_MS} ms`)
        tried()
        await this.connection.whenUp(RETRY_MS)
        if (this.connection.nc.isClosed()) return
        if (this.connection.up) await new Promise((resolve) => setTimeout(resolve, RETRY_MS)) // up, and refused: paced
      }
    }
    tried()
    while (!this.stopped) {
      await this.budget.wait(stopped)
      if (this.stopped) break
      const n = this.budget.claim(this.share())
      this.counts.pulls++
      let received = 0
      try {
        const messages = await this.consumer.fetch({ max_messages: n, expires: PULL_EXPIRES_MS })
        for await (const m of messages) {
          received++
          this.budget.arrived()
          this.take(m)
        }
      } catch (err) {
        this.counts.pullErrors++
        if (!this.stopped) {
          this.options.logger.warn({ event: this.event, group: this.group, err: err?.message }, `durable pull for ${this.event} (group ${this.group}) failed: ${err?.message}; again in ${RETRY_MS} ms`)
          this.budget.unclaim(n - received)
          received = n
          await this.connection.whenUp(RETRY_MS)
          if (this.connection.nc.isClosed()) break
          continue
        }
      }
      this.budget.unclaim(n - received)
    }
  }

  /** One delivery: run, then ack, give back or dead-letter; never throws. */
  take (m) {
    const o = this.options
    const deliveries = m.info.deliveryCount
    this.counts.received++
    if (deliveries > 1) this.counts.redelivered++
    const id = m.headers?.get(Header.ID) || `${m.info.stream}:${m.info.streamSequence}`
    // What the sweep (below) reads: when it started, when JetStream last heard of it.
    const d = { m, settled: false, started: performance.now(), heard: 0, onTimeout: null }
    d.heard = d.started
    const settle = () => {
      if (d.settled) return false
      d.settled = true
      this.running.delete(d)
      this.budget.settled()
      return true
    }
    d.settle = settle
    this.running.add(d)
    if (this.stopped) { settle(); m.nak(); this.counts.released++; return }
    if (deliveries > o.maxDeliver) {
      // The peer of the last attempt was lost inside its handler (JetStream delivered it once
      // more than maxDeliver, consumer's max_deliver): no attempt is left.
      this.counts.lost++
      return this.bury(m, id, { code: DeadCode.LOST, message: `the peer of attempt ${deliveries - 1} was lost before its handler answered (after ackWait ${o.ackWait} ms)` }, deliveries - 1, undefined, settle)
    }
    const decoded = decodeEvent(m.data, m.headers)
    if (decoded.problem !== undefined) {
      this.counts.undecodable++
      return this.bury(m, id, { code: DeadCode.UNDECODABLE, message: decoded.problem }, deliveries, undefined, settle)
    }
    d.onTimeout = () => this.failed(m, id, { code: DeadCode.TIMEOUT, message: `the handler ran past its timeout (${o.timeout} ms)` }, deliveries, decoded.payload, settle)
    this.startSweep()
    // Called by the peer, perhaps inside its dispatch: never throws into it (an ack on a
    // connection closed since throws; JetStream then delivers the event again).
    const finished = (out) => {
      if (d.settled) return
      try {
        if (out.ok) {
          settle()
          this.counts.handled++
          m.ack()
        } else if (out.refused) {
          settle()
          this.counts.refused++
          // Unsubscribed since (peer.unsubscribe()): this peer reads that consumer no more.
          if (out.code === UnknownMethodError.code) this.stop()
          m.nak(this.stopped || this.host.draining ? 0 : REFUSED_DELAY_MS)
        } else this.failed(m, id, { code: out.code, message: out.message }, deliveries, decoded.payload, settle)
      } catch (err) {
        this.options.logger.warn({ event: this.event, group: this.group, id, err: err?.message }, `durable event ${id}: its answer to JetStream failed (${err?.message}); JetStream delivers it again`)
      }
    }
    try {
      this.host.run(this.event, this.group, decoded.payload, { id, deliveries, headers: decoded.headers, timeoutMs: o.timeout, bytes: m.data.length }, finished)
    } catch (err) {
      this.failed(m, id, { code: err?.code ?? 'ERR_ZEROMESH_REMOTE', message: err?.message ?? String(err) }, deliveries, decoded.payload, settle)
    }
  }

  /**
   * One timer for every event this consumer holds (not two an event), running from the first
   * event to stop() (not started and cleared with each event): each tick tells JetStream
   * the peer still works on those it has not heard of for ackWait / 3 (+WPI), and fails those
   * whose handler ran past `timeout`.
   */
  startSweep () {
    if (this.sweep !== null) return
    const o = this.options
    const every = Math.max(20, Math.min(Math.floor(o.ackWait / 3), Math.floor(o.timeout / 4)))
    this.sweep = setInterval(() => {
      const now = performance.now()
      for (const d of this.running) {
        if (d.onTimeout !== null && now - d.started >= o.timeout) d.onTimeout()
        else if (now - d.heard >= o.ackWait / 3) { d.heard = now; d.m.working() }
      }
    }, every)
    this.sweep.unref() // never what keeps a process alive
  }

  stopSweep () {
    clearInterval(this.sweep)
    this.sweep = null
  }

  /** Attempt `deliveries` failed: back after its backoff, or to the dead letters after the last. */
  failed (m, id, error, deliveries, payload, settle) {
    if (!settle()) return
    this.counts.failed++
    const o = this.options
    if (deliveries >= o.maxDeliver) return this.bury(m, id, error, deliveries, payload, null)
    m.nak(o.backoff[Math.min(deliveries - 1, o.backoff.length - 1)])
  }

  /** To the dead letters (dead-letter.js), then the onDeadLetter hook; given back when JetStream did not store it. */
  bury (m, id, error, attempts, payload, settle) {
    const o = this.options
    deadLetter({ connection: this.connection, options: o, event: this.event, group: this.group, id, m, error, attempts }).then((stored) => {
      this.counts.deadLettered++
      o.logger.warn({ event: this.event, group: this.group, id, attempts, code: error.code }, `durable event ${id} (${this.event}, group ${this.group}) dead-lettered after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${error.message}`)
      if (o.onDeadLetter !== null) {
        try {
          Promise.resolve(o.onDeadLetter({ event: this.event, group: this.group, id, attempts, error, payload, stream: m.info.stream, seq: m.info.streamSequence, deadLetter: stored })).catch((err) => o.logger.error({ err: err?.message }, `onDeadLetter threw: ${err?.message}`))
        } catch (err) {
          o.logger.error({ err: err?.message }, `onDeadLetter threw: ${err?.message}`)
        }
      }
    }, (err) => {
      this.counts.deadLetterErrors++
      o.logger.error({ event: this.event, group: this.group, id, err: err?.message }, `durable event ${id} could not be dead-lettered (${err?.message}): given back`)
      try { m.nak(o.backoff[0]) } catch {}
    }).finally(() => settle?.())
  }

  /** Stops pulling; events not started are given back as they arrive. */
  stop () {
    this.stopped = true
    if (this.running.size === 0) this.stopSweep()
  }

  /** Gives back (NAK, no delay) every event still held: a drain that ran out of time. */
  release () {
    for (const d of [...this.running]) {
      if (d.settle()) { try { d.m.nak() } catch {} this.counts.released++ }
    }
    this.stopSweep()
  }
}
