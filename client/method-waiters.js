// client.waitFor(method): promises that resolve once some peer that is up serves a method
// (with a version range and a label selector, as a request's), looked at again whenever the
// routes change, and rejected at their timeout or when the client closes.
import { versionRange, whereProblem } from '../protocol/service.js'
import { TimeoutError, invalidArgument } from '../protocol/errors.js'
import { checkMethod } from '../runtime/options.js'

const KNOWN = ['timeout', 'version', 'where']

export class MethodWaiters {
  /**
   * @param {object} o
   * @param {import('./routing.js').Router} o.router
   * @param {{ setTimeout: Function, clearTimeout: Function }} o.clock
   * @param {number} o.timeout                      the client's timeout, the default
   * @param {Record<string,string>|null} o.where    the client's selector, the default
   */
  constructor (o) {
    this.o = o
    this.waiting = new Set()
    this.onEnded = null // told after a waiter ends, while the client drains (core.js drained())
  }

  /** Resolves with the endpoints of the up peers that serve `method`, once there is one. */
  add (method, options = {}) {
    let version; let where; let timeout
    try {
      checkMethod(method, 'waitFor(method): method')
      for (const k of Object.keys(options ?? {})) if (!KNOWN.includes(k)) throw invalidArgument(`unknown waitFor option "${k}"; known: ${KNOWN.join(', ')}`)
      timeout = options.timeout ?? this.o.timeout
      if (!Number.isInteger(timeout) || timeout < 1 || timeout > 2 ** 31 - 1) throw invalidArgument('waitFor: timeout must be a whole number of milliseconds from 1 to 2^31-1')
      version = versionRange(options.version)
      if (version === undefined) throw invalidArgument(`waitFor: version must be a semver range such as '^2', got ${JSON.stringify(options.version)}`)
      where = options.where === undefined ? this.o.where : options.where
      if (where !== null && whereProblem(where) !== null) throw invalidArgument(`waitFor: ${whereProblem(where)}`)
      if (where !== null && Object.keys(where).length === 0) where = null
    } catch (err) {
      return Promise.reject(err)
    }
    const test = () => {
      const list = this.o.router.candidates(method, version, where)
      return list.length > 0 ? list.map((p) => p.endpoint) : null
    }
    return this.watch(test, timeout, () => new TimeoutError(`zeromesh: no peer serving "${method}" came up within ${timeout} ms (${this.o.router.explain(method, version, where)})`)).promise
  }

  /**
   * Resolves with what `test()` gives once it gives something other than null (looked at now,
   * and whenever the routes change); rejects with `timedOut()` after `timeout` ms, or when the
   * client closes; with `recheckAfter`, it is also looked at once that many ms from now (for a
   * test that changes with time). Returns { promise, cancel }.
   */
  watch (test, timeout, timedOut, recheckAfter = null) {
    let w
    const promise = new Promise((resolve, reject) => {
      w = {
        check: () => { const v = test(); if (v !== null) w.end(null, v) },
        end: (err, value) => {
          if (!this.waiting.delete(w)) return
          this.o.clock.clearTimeout(w.timer)
          if (w.recheck !== null) this.o.clock.clearTimeout(w.recheck)
          if (err === null) resolve(value)
          else reject(err)
          this.onEnded?.()
        },
        recheck: null,
      }
      w.timer = this.o.clock.setTimeout(() => w.end(timedOut()), timeout)
      if (recheckAfter !== null && recheckAfter < timeout) w.recheck = this.o.clock.setTimeout(() => { w.recheck = null; w.check() }, recheckAfter)
      this.waiting.add(w)
      w.check()
    })
    return { promise, cancel: (err) => w.end(err) }
  }

  /** The routes changed: every waiter looks again. */
  check () {
    for (const w of [...this.waiting]) w.check()
  }

  /** The client closed: every waiter fails with `err`. */
  close (err) {
    for (const w of [...this.waiting]) w.end(err)
  }
}
