// A durable publish: the event appended to the stream, resolved once JetStream stored it with
// what it stored ({ id, stream, seq, duplicate }). The event id is the message id (Nats-Msg-Id),
// so a publish retried with the same `id` within the duplicate window is stored once. While
// NATS is down a publish fails at once (DurableUnavailableError), and at most maxPending wait
// for JetStream's answer (beyond, BusyError): nothing is buffered without bound, nothing is
// dropped without an error.
import { randomUUID } from 'node:crypto'
import { BusyError, AbortError, invalidArgument } from '../protocol/errors.js'
import { headersProblem } from '../protocol/headers.js'
import { checkOptions, int } from '../runtime/options.js'
import { DurableUnavailableError } from './errors.js'
import { encodePayload, Header } from './codec.js'
import { subjectOf } from './names.js'

const HEADER_ROOM = 512 // bytes of NATS headers zeromesh adds, besides the publisher's own, kept free below max_payload

export class DurablePublisher {
  /**
   * @param {object} o
   * @param {import('./connection.js').DurableConnection} o.connection
   * @param {object} o.options  resolveDurableOptions()'s
   */
  constructor ({ connection, options }) {
    this.c = connection
    this.o = options
    this.pending = 0
    this.counts = { published: 0, duplicates: 0, failed: 0, refused: 0 }
    // The options a durable publish takes, checked where they enter; made once. The mesh's
    // (groups, ack, key, where...) are refused: they mean nothing here.
    this.spec = {
      id: (v) => {
        if (v === undefined) return randomUUID()
        if (typeof v !== 'string' || v.length === 0 || v.length > 256 || /\s/.test(v)) throw invalidArgument(`durable publish: id must be 1 to 256 characters without whitespace, got ${JSON.stringify(v)}`)
        return v
      },
      headers: (v) => {
        if (v === undefined) return null
        const problem = headersProblem(v)
        if (problem !== null) throw invalidArgument(`durable publish: headers: ${problem}`)
        return Object.keys(v).length === 0 ? null : v
      },
      timeout: int(options.publishTimeout, 1, 2 ** 31 - 1),
      signal: (v) => v,
    }
  }

  /** Publishes `event` (durable: checked by the caller) with `payload`. Options: { id, headers, timeout, signal }. */
  async publish (event, payload, options) {
    const o = this.o
    const opts = checkOptions('durable publish options', options, this.spec)
    if (opts.signal?.aborted) throw new AbortError('zeromesh: publish aborted')
    const nc = this.c.nc
    let data
    try {
      data = encodePayload(payload)
    } catch (err) {
      throw invalidArgument(`publish("${event}"): the payload cannot be packed as MessagePack: ${err.message}`)
    }
    // Headers only when the publisher gave some: the event's name is the subject's tail, and
    // each header costs the server and every reader on each event.
    const json = opts.headers === null ? null : JSON.stringify(opts.headers)
    let h
    if (json !== null) { h = this.c.nats.headers(); h.set(Header.HEADERS, json) }
    const max = nc.info?.max_payload ?? 1024 * 1024
    const size = data.length + (json?.length ?? 0) + HEADER_ROOM
    if (size > max) throw invalidArgument(`publish("${event}"): the event is ${data.length} bytes packed (${size} with its headers), more than the ${max} bytes NATS takes in a message (the server's max_payload)`)
    if (!this.c.up || nc.isClosed()) {
      this.counts.failed++
      throw new DurableUnavailableError(`zeromesh: durable publish of "${event}" refused: NATS at ${o.servers.join(', ')} is not connected (reconnecting); nothing was stored, publish again later (with the same id: stored once)`, { stored: false })
    }
    if (this.pending >= o.maxPending) {
      this.counts.refused++
      throw new BusyError(`zeromesh: ${this.pending} durable publishes wait for JetStream's answer (maxPending ${o.maxPending}): publish again later`)
    }
    this.pending++
    try {
      // No expected-stream header: streams' subjects never overlap, so only the stream
      // durableEvents() made or checked stores <subjects>.<event>.
      const ack = await this.c.js.publish(subjectOf(o.subjects, event), data, h === undefined ? { msgID: opts.id, timeout: opts.timeout } : { msgID: opts.id, headers: h, timeout: opts.timeout })
      if (ack.duplicate) this.counts.duplicates++
      else this.counts.published++
      return { id: opts.id, stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate }
    } catch (err) {
      this.counts.failed++
      throw unavailable(event, err, o)
    } finally {
      this.pending--
    }
  }
}

/** What a failed JetStream publish means to the caller, typed. */
function unavailable (event, err, o) {
  const text = `${err?.message ?? err}`
  // No responders: nothing took the message (no stream on its subject, JetStream not up yet).
  const none = err?.code === '503' || /no responders/i.test(text) || err?.isNoResponders?.() === true
  if (none) return new DurableUnavailableError(`zeromesh: durable publish of "${event}" not stored: no JetStream stream answered (${text}); publish again later`, { stored: false, cause: err })
  if (/timeout/i.test(text) || err?.name === 'TimeoutError') return new DurableUnavailableError(`zeromesh: JetStream did not confirm the durable publish of "${event}" in time (${text}): it may be stored; publish again with the same id (stored once within ${o.duplicateWindow} ms)`, { stored: null, cause: err })
  return new DurableUnavailableError(`zeromesh: durable publish of "${event}" failed: ${text}; publish again with the same id (stored once)`, { stored: null, cause: err })
}
