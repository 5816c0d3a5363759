// What this peer serves: its handlers by method name, the service version and labels its
// operator gave, and a declared capacity. Kept as one descriptor (protocol/service.js) whose
// digest rides in this peer's membership claim; serve() and unserve() change it at run time.
// Only this peer states its own descriptor: clients ask it (SERVICE_GET) on their own
// connection, never believe another peer about it (PROTOCOL.md 4.8).
import { describe, descriptorProblem } from '../protocol/service.js'
import { invalidArgument } from '../protocol/errors.js'

export class OwnService {
  /**
   * @param {object} o
   * @param {string|null} o.version     semver, or null
   * @param {Record<string,string>} o.labels
   * @param {number|null} o.capacity    requests it runs at full speed at once, or null (undeclared)
   */
  constructor ({ version, labels, capacity }) {
    this.version = version
    this.labels = labels
    this.capacity = capacity
    this.handlers = Object.create(null) // method -> function, what the dispatcher runs
    this.descriptor = this.describe()
  }

  /** Adds handlers (an object of functions); returns the new descriptor. */
  addAll (handlers) {
    for (const [name, fn] of Object.entries(handlers)) this.handlers[name] = fn
    return (this.descriptor = this.describe())
  }

  /** Serves `name` with `fn` from now on (replacing a handler of that name); returns whether the descriptor changed. */
  serve (name, fn) {
    if (typeof name !== 'string' || name.length === 0 || name.length > 256) throw invalidArgument(`serve(name, fn): name must be a method name of 1 to 256 characters, got ${JSON.stringify(name)}`)
    if (typeof fn !== 'function') throw invalidArgument(`serve("${name}", fn): fn must be a function (args, ctx) => result`)
    const had = name in this.handlers
    this.handlers[name] = fn
    if (had) return false
    this.descriptor = this.describe()
    return true
  }

  /** Stops serving `name`; returns whether it was served. */
  unserve (name) {
    if (!(name in this.handlers)) return false
    delete this.handlers[name]
    this.descriptor = this.describe()
    return true
  }

  describe () {
    const d = { methods: Object.keys(this.handlers), version: this.version, labels: this.labels, capacity: this.capacity }
    const problem = descriptorProblem(d)
    if (problem !== null) throw invalidArgument(`what this peer serves breaks a limit of the protocol: ${problem}`)
    return describe(d)
  }
}
