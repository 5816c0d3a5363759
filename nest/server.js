// ZeromeshServer: a NestJS custom transport strategy that makes the application's
// @MessagePattern and @EventPattern handlers a zeromesh peer's methods and subscriptions
// (handlers.js says how). Nest binds the handlers (pipes, guards, interceptors, exception
// filters) and hands them over by addHandler(); listen() starts the Peer with them.
//
// Nest's processing hooks (11.2 and 12: setOnProcessingStartHook/EndHook, what tracing plugs into) run
// around every handler, on the peer's main thread as a middleware, whether the handler runs
// there or in a thread; nothing runs for them until one is set. Every @EventPattern with no
// group of its own runs on every server instance (each instance is a group), as on Nest's
// pub/sub transports; the `group` option makes the instances one group (NATS's queue).
//
// With `threads: N` the handlers run in N worker threads instead, so CPU-heavy ones never
// block the peer's main thread (membership, sockets): each thread bootstraps the application
// module named by `module` (thread.js) and serves its own instances, bound as Nest binds them.
import { Server } from '@nestjs/microservices'
import { pathToFileURL } from 'node:url'
import { randomBytes } from 'node:crypto'
import { Peer } from '../peer/peer.js'
import { zeromeshHandlers, ZEROMESH_TRANSPORT } from './handlers.js'
import { ZeromeshContext } from './context.js'
import { invalidArgument } from '../protocol/errors.js'

const THREAD_MODULE = new URL('./thread.js', import.meta.url)

export class ZeromeshServer extends Server {
  /**
   * @param {object} [options]  a Peer's options (bind, seeds, labels, security, ...) without
   *   handlers and events, which come from the application's patterns; and:
   * @param {number} [options.threads]  worker threads to run the handlers in (0, the default: the main thread)
   * @param {string|URL} [options.module]  with threads: the file of the application module each thread bootstraps
   * @param {string} [options.moduleExport]  its export (default 'AppModule')
   * @param {string} [options.group]  the group of every @EventPattern that names none: the instances of one group share each event (default: none, every instance runs it)
   * @param {Array<string>|false} [options.threadLogger]  the Nest log levels of each thread's application (default ['error', 'warn'])
   */
  constructor (options = {}) {
    super()
    if (options === null || typeof options !== 'object') throw invalidArgument('new ZeromeshServer(options): options must be an object of Peer options (docs/guides/nestjs.md)')
    for (const k of ['handlers', 'events']) if (options[k] !== undefined) throw invalidArgument(`new ZeromeshServer(options): leave out ${k}: the application's @MessagePattern and @EventPattern handlers are its ${k}`)
    const { module, moduleExport = 'AppModule', group = null, threadLogger = ['error', 'warn'], threads = 0, ...peerOptions } = options
    if (!Number.isInteger(threads) || threads < 0) throw invalidArgument(`new ZeromeshServer(options): threads must be a whole number (0: handlers on the main thread), got ${JSON.stringify(threads)}`)
    if (threads > 0 && module === undefined) throw invalidArgument('new ZeromeshServer({ threads }): give module, the file of the application module each thread bootstraps (its export: moduleExport, default AppModule)')
    if (threads === 0 && module !== undefined) throw invalidArgument('new ZeromeshServer({ module }): module is for worker threads: give threads too, or leave module out to run the handlers on the main thread')
    if (typeof moduleExport !== 'string') throw invalidArgument('new ZeromeshServer(options): moduleExport must be a string')
    if (group !== null && typeof group !== 'string') throw invalidArgument('new ZeromeshServer(options): group must be a string')
    this.transportId = ZEROMESH_TRANSPORT
    this.propagatesEventHandlerErrors = true // an event handler's error goes back to its publisher, not to Nest's log
    // This instance's own name: the group of its events when no option groups them.
    this.own = { threads, module: module === undefined ? null : moduleUrl(module), moduleExport, group, threadLogger, instance: randomBytes(4).toString('hex') }
    this.hooked = false // a processing hook was set: the peer runs them (hooks())
    this.peerOptions = peerOptions
    this.peer = null
    this.listeners = [] // on() before listen(): [event, callback]
  }

  /** Starts the peer: its callback gets an error when it cannot (a port in use, a handler that fails to load), which makes app.listen() reject. */
  listen (callback) {
    this.start().then(() => callback(), (err) => callback(err))
  }

  async start () {
    const o = this.own
    let given
    let tied = []
    if (o.threads === 0) {
      const { methods, events, subscriptions } = zeromeshHandlers(this.messageHandlers, { group: o.group, instance: o.instance })
      given = { handlers: methods, events }
      tied = subscriptions
    } else {
      given = { handlers: threadModuleUrl(o), threads: o.threads }
    }
    const peer = new Peer({ ...this.peerOptions, ...given })
    for (const s of tied) peer.subscribe(s.event, s.handler, { group: s.group }) // a contract's events, their payloads checked (on())
    for (const [event, callback] of this.listeners) peer.on(event, callback)
    if (this.hooked) peer.use(this.hooks())
    try {
      await peer.start()
    } catch (err) {
      await peer.stop().catch(() => {})
      this._status$.next('disconnected')
      throw err
    }
    this.peer = peer
    this._status$.next('connected')
  }

  /** Nest 11.2 and 12: runs `hook` as each handler starts (it calls `done` to run it); the peer runs it from then on. */
  setOnProcessingStartHook (hook) {
    if (typeof super.setOnProcessingStartHook !== 'function') throw hooksMissing('setOnProcessingStartHook')
    super.setOnProcessingStartHook(hook)
    this.hook()
  }

  /** Nest 11.2 and 12: runs `hook` as each handler ends (its value given, its Observable completed, or failed). */
  setOnProcessingEndHook (hook) {
    if (typeof super.setOnProcessingEndHook !== 'function') throw hooksMissing('setOnProcessingEndHook')
    super.setOnProcessingEndHook(hook)
    this.hook()
  }

  hook () {
    if (this.hooked) return
    this.hooked = true
    this.peer?.use(this.hooks())
  }

  /**
   * The processing hooks as a peer middleware: the start hook gets the call's context and a
   * `done` that runs the rest of the chain (the handler, in a thread or here); the end hook
   * runs once that is over, whatever its outcome. A request, an event and a stream alike.
   */
  hooks () {
    return (ctx, next) => new Promise((resolve, reject) => {
      const context = new ZeromeshContext([ctx])
      let ended = false
      const end = () => {
        if (ended) return
        ended = true
        this.onProcessingEndHook?.(this.transportId, context)
      }
      const done = async () => {
        try {
          resolve(await next())
        } catch (err) {
          reject(err)
        } finally {
          end()
        }
      }
      try {
        this.onProcessingStartHook(this.transportId, context, done)
      } catch (err) {
        end()
        reject(err)
      }
    })
  }

  /** Graceful: the peer says it leaves, finishes what runs (its drainTimeout) and closes. */
  async close () {
    const peer = this.peer
    this.peer = null
    if (peer === null) return
    await peer.stop()
    this._status$.next('disconnected')
  }

  /** Listens to the peer's events ('member', 'error'); before listen() too. */
  on (event, callback) {
    if (this.peer !== null) this.peer.on(event, callback)
    else this.listeners.push([event, callback])
  }

  /** The zeromesh Peer (after listen()). */
  unwrap () {
    if (this.peer === null) throw new Error('zeromesh/nest: the server is not listening: unwrap() after app.listen()')
    return this.peer
  }
}

/** The thread module's URL, what it bootstraps in its query (thread.js reads it). */
function threadModuleUrl (o) {
  const u = new URL(THREAD_MODULE)
  u.searchParams.set('module', o.module)
  u.searchParams.set('export', o.moduleExport)
  u.searchParams.set('options', JSON.stringify({ group: o.group, logger: o.threadLogger, instance: o.instance }))
  return u
}

function moduleUrl (m) {
  if (m instanceof URL) return m.href
  if (typeof m !== 'string' || m.length === 0) throw invalidArgument('new ZeromeshServer({ module }): module must be a file path or a file: URL')
  return m.startsWith('file:') ? m : pathToFileURL(m).href
}

/** A hook asked of a @nestjs/microservices older than 11.2, which has none. */
function hooksMissing (name) {
  return new TypeError(`zeromesh/nest: ${name}() needs @nestjs/microservices 11.2 or later; this application has an older one`)
}
