// What this peer serves: its handlers by method name, the service version and labels its
// operator gave, and a declared capacity. Kept as one descriptor (protocol/service.js) whose
// digest rides in this peer's membership claim; serve() and unserve() change it at run time.
// Only this peer states its own descriptor: clients ask it (SERVICE_GET) on their own
// connection, never believe another peer about it (PROTOCOL.md 4.8).
import { describe, descriptorProblem } from '../protocol/service.js'
import { contractsElement, contractsDigest, CONTRACTS_LABEL } from '../protocol/contracts.js'
import { eventsElement, eventsDigest, EVENTS_LABEL } from '../protocol/events.js'
import { streamsElement, streamsDigest, STREAMS_LABEL } from '../protocol/stream-methods.js'
import { servesStream } from '../runtime/stream-marker.js'
import { Subscriptions } from './subscriptions.js'
import { METHOD } from '../runtime/contract.js'
import { invalidArgument } from '../protocol/errors.js'
import { checkMethod } from '../runtime/options.js'
import { Status } from '../protocol/constants.js'

export class OwnService {
  /**
   * @param {object} o
   * @param {string|null} o.version     semver, or null
   * @param {Record<string,string>} o.labels
   * @param {number|null} o.capacity    requests it runs at full speed at once, or null (undeclared)
   */
  constructor ({ version, labels, capacity, durable = null }) {
    for (const own of [CONTRACTS_LABEL, EVENTS_LABEL, STREAMS_LABEL]) if (own in labels) throw invalidArgument(`label ${own} is the peer's own: it states the digest of what it ${own === EVENTS_LABEL ? 'subscribes to' : own === STREAMS_LABEL ? 'serves as streams' : 'serves'}`)
    this.version = version
    this.labels = labels
    this.capacity = capacity
    this.durable = durable // subscriptions to its durable events come from the log (runtime/durable-hook.js): never stated to the mesh
    this.handlers = Object.create(null) // method -> function, what the dispatcher runs
    this.subscriptions = new Subscriptions() // event -> group -> handler, what its events run
    this.descriptor = this.describe()
  }

  /** Subscribes `handler` to `event` in `group`; returns whether the descriptor changed. */
  subscribe (event, handler, group) {
    const digest = this.descriptor.digest
    this.subscriptions.add(event, handler, group)
    this.descriptor = this.describe()
    return this.descriptor.digest !== digest
  }

  /** Subscribes each of `list` ([{ event, group, handler }]); the descriptor is made once. */
  subscribeAll (list) {
    for (const sub of list) this.subscriptions.add(sub.event, sub.handler, sub.group)
    this.descriptor = this.describe()
  }

  /** Drops the subscription of `event` in `group`; returns whether there was one. */
  unsubscribe (event, group) {
    if (!this.subscriptions.remove(event, group)) return false
    this.descriptor = this.describe()
    return true
  }

  /** Adds handlers (an object of functions); returns the new descriptor. */
  addAll (handlers) {
    for (const [name, fn] of Object.entries(handlers)) this.handlers[name] = fn
    return (this.descriptor = this.describe())
  }

  /** Serves `name` with `fn` from now on (replacing a handler of that name, perhaps of another contract); returns whether the descriptor changed. */
  serve (name, fn) {
    checkMethod(name, 'serve(name, fn): name')
    if (typeof fn !== 'function') throw invalidArgument(`serve("${name}", fn): fn must be a function (args, ctx) => result`)
    const had = name in this.handlers
    const before = had ? this.handlers[name] : undefined
    this.handlers[name] = fn
    if (had && before[METHOD] === fn[METHOD] && servesStream(before) === servesStream(fn)) return false // the same contract method (or none), a stream or not as before: what it serves is unchanged
    const digest = this.descriptor.digest
    this.descriptor = this.describe()
    return this.descriptor.digest !== digest
  }

  /** Stops serving `name`; returns whether it was served. */
  unserve (name) {
    if (!(name in this.handlers)) return false
    delete this.handlers[name]
    this.descriptor = this.describe()
    return true
  }

  /** The handler of `method`, or undefined: it is not served (read at each request: serve() changes it). */
  handler (method) {
    const fn = this.handlers[method] // a table with no prototype
    return typeof fn === 'function' ? fn : undefined
  }

  /** The refusal of a method it does not serve, naming those it does (at most 20). */
  unknown (method) {
    if (this.servedText === undefined) {
      const h = this.handlers
      const names = Object.keys(h).filter((k) => typeof h[k] === 'function').sort()
      this.servedText = names.length === 0 ? 'no methods' : names.length <= 20 ? names.join(', ') : `${names.slice(0, 20).join(', ')} and ${names.length - 20} more`
    }
    return { status: Status.UNKNOWN_METHOD, message: `unknown method "${method}"; this peer serves ${this.servedText}` }
  }

  describe () {
    this.servedText = undefined // the methods' names for unknown(), made again when first needed
    const d = { methods: Object.keys(this.handlers), version: this.version, labels: this.labels, capacity: this.capacity, contracts: null, events: null, streams: null }
    // The methods it serves as streams, stated in the answer and, by digest, in a label (PROTOCOL.md 4.8.2).
    const streams = streamsElement(d.methods.filter((m) => servesStream(this.handlers[m])))
    if (streams !== null) {
      d.streams = streams
      d.labels = { ...d.labels, [STREAMS_LABEL]: streamsDigest(streams) }
    }
    // Its subscriptions, stated in the answer and, by digest, in a label (PROTOCOL.md 4.11).
    const events = eventsElement((this.subscriptions?.pairs() ?? []).filter(([e]) => this.durable === null || !this.durable.owns(e)))
    if (events !== null) {
      d.events = events
      d.labels = { ...d.labels, [EVENTS_LABEL]: eventsDigest(events) }
    }
    // The contracts of the methods implement() made (a thread's module's too: handlers.js
    // carries their descriptions over), stated in the answer and, by digest, in a label.
    const described = []
    for (const fn of Object.values(this.handlers)) if (fn[METHOD] !== undefined) described.push(fn[METHOD])
    const c = contractsElement(described)
    if (c !== null) {
      d.contracts = c.element
      d.labels = { ...d.labels, [CONTRACTS_LABEL]: contractsDigest(c.element) }
      if (c.dropped > 0 && this.warnedDropped !== c.dropped) {
        this.warnedDropped = c.dropped
        process.emitWarning(`zeromesh: ${c.dropped} JSON Schema${c.dropped === 1 ? '' : 's'} of this peer's contracts left out of its service answer: larger than a schema (64 KiB) or all of them (256 KiB) may be (PROTOCOL.md 3.3)`, { code: 'ZEROMESH_SCHEMA_TOO_LARGE' })
      }
    }
    const problem = descriptorProblem(d)
    if (problem !== null) throw invalidArgument(`what this peer serves breaks a limit of the protocol: ${problem}`)
    return describe(d)
  }
}
