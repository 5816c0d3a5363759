// asyncapiOf(source, options): the mesh's events as an AsyncAPI 3.0 document. Each event (its
// wire name, `orders.placed`) is a channel whose one message has the payload schema of the
// contract that publishes it, where a contract says; each group that subscribes to it is a
// `receive` operation (one peer of the group handles each event: docs/guides/events.md), and
// each contract that publishes it a `send` operation. Payloads are the JSON Schemas the
// schema libraries made (2020-12), under AsyncAPI's default schema format; a schema keyword
// draft-07 does not know is read by AsyncAPI tools as an unknown keyword.
//
// Durable events (JetStream, docs/design/architecture.md) are not stated by peers yet: a
// subscription that says `durable: true` (described.js reads it from a descriptor's events)
// gets `x-zeromesh-durable: true` on its operation, the one place this document marks them.
import { describedOf } from './described.js'
import { componentName, placed } from './schemas.js'
import { checkOptions } from './openapi.js'

const KNOWN = ['title', 'version', 'description', 'strict', 'onWarning']

/**
 * @param {unknown} source  a Client, or contracts, implement() results, on() subscriptions and service descriptors (one or an array)
 * @param {{ title?: string, version?: string, description?: string, strict?: boolean, onWarning?: (message: string) => void }} [options]
 */
export function asyncapiOf (source, options = {}) {
  checkOptions(options, KNOWN, 'asyncapiOf')
  return asyncapiOfDescribed(describedOf(source, options), options)
}

/** The document of an already described mesh (the gateway's). */
export function asyncapiOfDescribed (mesh, { title, version, description } = {}) {
  const contracts = [...mesh.contracts.values()]
  const versions = [...new Set(contracts.map((c) => c.version).filter((v) => v !== null))]
  const published = new Map() // event -> { contract, payload }
  for (const c of contracts) for (const e of c.events) published.set(e.wire, e)
  const events = [...new Set([...published.keys(), ...mesh.subscriptions.map((s) => s.event)])].sort()
  const ids = new Set()
  const idOf = (name) => { // AsyncAPI keys: ^[A-Za-z0-9_-]+$, one per name
    const base = name.replace(/[^A-Za-z0-9_-]/g, '_')
    let id = base
    for (let i = 2; ids.has(id); i++) id = `${base}_${i}`
    ids.add(id)
    return id
  }
  const channels = {}
  const operations = {}
  const messages = {}
  const schemas = {}
  for (const event of events) {
    const ch = idOf(event)
    const e = published.get(event)
    const msg = componentName(event)
    const message = { name: event, title: event }
    if (e !== undefined) {
      schemas[msg] = placed(e.payload, `#/components/schemas/${msg}`)
      message.payload = { $ref: `#/components/schemas/${msg}` }
    }
    messages[msg] = message
    channels[ch] = {
      address: event,
      description: e === undefined ? `event ${event} (no contract in view says its payload)` : `event ${event}, published by contract ${e.contract}`,
      messages: { [msg]: { $ref: `#/components/messages/${msg}` } },
    }
    const refs = { channel: { $ref: `#/channels/${ch}` }, messages: [{ $ref: `#/channels/${ch}/messages/${msg}` }] }
    if (e !== undefined) operations[idOf(`${e.contract}.publishes.${event}`)] = { action: 'send', ...refs, title: `${e.contract} publishes ${event}`, description: 'client.publish(event, payload): one delivery to one peer of each subscribing group' }
    for (const s of mesh.subscriptions) {
      if (s.event !== event) continue
      operations[idOf(`${s.group}.receives.${event}`)] = {
        action: 'receive',
        ...refs,
        title: `group ${s.group} receives ${event}`,
        description: `One peer of group ${s.group} handles each event`,
        'x-zeromesh-group': s.group,
        ...(s.durable ? { 'x-zeromesh-durable': true } : {}),
      }
    }
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: title ?? (contracts.length > 0 ? `${contracts.map((c) => c.name).join(', ')} events` : 'zeromesh mesh events'),
      version: version ?? (versions.length === 1 ? versions[0] : '0.0.0'),
      ...(description === undefined ? {} : { description }),
    },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: { messages, schemas },
  }
}
