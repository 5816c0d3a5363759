// The NATS client, loaded only when durable events are configured: @nats-io/transport-node
// and @nats-io/jetstream are optional peer dependencies of zeromesh, so a user who does not
// use durable events installs nothing more.
import { DurableSetupError } from './errors.js'

export const NATS_PACKAGES = Object.freeze(['@nats-io/transport-node', '@nats-io/jetstream'])

/** { connect, headers, jetstream, jetstreamManager, AckPolicy, DeliverPolicy, StorageType, RetentionPolicy }; `names` for tests. */
export async function loadNats (names = NATS_PACKAGES) {
  let transport, js
  try {
    [transport, js] = await Promise.all(names.map((n) => import(n)))
  } catch (err) {
    if (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') {
      throw new DurableSetupError(`zeromesh/jetstream needs ${names.join(' and ')} (optional peer dependencies of zeromesh, not installed): npm install ${names.map((n) => `${n}@^3.4.0`).join(' ')}`, { cause: err })
    }
    throw err
  }
  return {
    connect: transport.connect,
    headers: transport.headers,
    jetstream: js.jetstream,
    jetstreamManager: js.jetstreamManager,
    AckPolicy: js.AckPolicy,
    DeliverPolicy: js.DeliverPolicy,
    StorageType: js.StorageType,
    RetentionPolicy: js.RetentionPolicy,
  }
}
