// zeromesh/jetstream: durable events on NATS JetStream (docs/guides/events.md#durable-events,
// docs/reference/durable.md). Nothing here loads unless this entry is imported, and the NATS
// client (@nats-io/transport-node, @nats-io/jetstream: optional peer dependencies of zeromesh)
// only when durableEvents() is called. peer/ and client/ never import this room: they take
// what durableEvents() resolves with as their `durable` option (runtime/durable-hook.js).
import { resolveDurableOptions, durableDefaults } from './options.js'
import { loadNats } from './load.js'
import { DurableEvents } from './durable.js'

export { DurableUnavailableError, DurableSetupError, DeadCode } from './errors.js'
export { consumerName, escapeName, subjectProblem } from './names.js'
export { Header } from './codec.js'
export { durableDefaults }

/**
 * Connects to NATS, makes the streams (unless createStreams is false) and resolves with the
 * object to give a Peer and a Client as their `durable` option.
 */
export async function durableEvents (options) {
  const o = resolveDurableOptions(options)
  const nats = await loadNats()
  return new DurableEvents(nats, o).open()
}
