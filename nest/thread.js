// The handler module a ZeromeshServer with `threads` gives its worker threads (server.js puts
// what to bootstrap in this module's query). Each thread bootstraps the application module as
// a Nest microservice of its own, with a strategy that only collects the handlers Nest binds
// (pipes, guards, interceptors, filters, dependency injection: each thread has its own
// instances), and exports them as a zeromesh handler module does: the methods as its default
// export, the subscriptions as `events` (handlers.js).
import { NestFactory } from '@nestjs/core'
import { Server } from '@nestjs/microservices'
import { zeromeshHandlers, ZEROMESH_TRANSPORT } from './handlers.js'
import { SUBSCRIPTIONS } from '../runtime/contract.js'

const query = new URL(import.meta.url).searchParams
const moduleUrl = query.get('module')
const exportName = query.get('export')
const { group, logger, instance } = JSON.parse(query.get('options'))

/** The strategy in a thread: it serves nothing itself; the peer's main thread hands it work. */
class ThreadStrategy extends Server {
  constructor () {
    super()
    this.transportId = ZEROMESH_TRANSPORT
    this.propagatesEventHandlerErrors = true
  }

  listen (callback) { callback() }
  close () {}
  on () {}
  unwrap () { return null }
}

const mod = await import(moduleUrl)
const AppModule = mod[exportName] ?? mod.default?.[exportName]
if (typeof AppModule !== 'function') throw new Error(`zeromesh/nest: ${moduleUrl} exports no ${exportName} (the module option names the file, moduleExport its export)`)
const strategy = new ThreadStrategy()
const app = await NestFactory.createMicroservice(AppModule, { strategy, logger })
await app.listen()
const { methods, events: byEvent, subscriptions } = zeromeshHandlers(strategy.getHandlers(), { group, instance })
Object.defineProperty(methods, SUBSCRIPTIONS, { value: Object.freeze(subscriptions) }) // a contract's events, as implement() carries them

export default methods
export const events = byEvent
