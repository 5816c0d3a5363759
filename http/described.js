// What a document of the mesh describes, gathered from what the caller has, in one shape for
// the OpenAPI and AsyncAPI writers and the gateway:
//   - contracts (contract()): their methods' and events' schemas, made JSON Schema 2020-12 by
//     the schema library itself (Standard JSON Schema, `~standard.jsonSchema`);
//   - implement() results and on() subscriptions: the groups that subscribe to events;
//   - service descriptors (client.describe(endpoint), `zeromesh describe --json`): the JSON
//     Schemas a peer stated, its methods without a contract, its subscriptions and streams;
//   - a live Client: its peers' descriptors, by its public client.peers().
// A schema with no JSON Schema (a library without Standard JSON Schema, a transform JSON
// Schema cannot express, a peer that stated none) becomes the open schema `{}` with a
// warning naming why (its vendor when it is a schema in hand), or, with `strict`, an
// InvalidArgumentError saying the same.
import compareVersions from 'semver/functions/compare.js'
import { CONTRACT, SUBSCRIPTION, SUBSCRIPTIONS } from '../runtime/contract.js'
import { invalidArgument } from '../protocol/errors.js'

/**
 * @typedef {{ schema: object|null, missing: string|null }} Described  a JSON Schema, or null and why
 * @typedef {{ contract: string|null, method: string, wire: string, stream: boolean, input: object, output: object }} DescribedMethod
 * @typedef {{ contract: string, name: string, wire: string, payload: object }} DescribedEvent
 * @typedef {{ event: string, group: string, durable: boolean }} DescribedSubscription
 * @typedef {{ contracts: Map<string, { name: string, version: string|null, methods: DescribedMethod[], events: DescribedEvent[] }>, methods: DescribedMethod[], subscriptions: DescribedSubscription[] }} Mesh
 */

/**
 * @param {unknown} source  one of, or an array of: a Client, contracts, implement() results, on() subscriptions, service descriptors
 * @param {{ strict?: boolean, onWarning?: (message: string) => void }} options
 * @returns {Mesh}
 */
export function describedOf (source, { strict = false, onWarning = defaultWarning } = {}) {
  if (typeof strict !== 'boolean') throw invalidArgument('zeromesh/http: strict must be true or false')
  if (typeof onWarning !== 'function') throw invalidArgument('zeromesh/http: onWarning must be a function (message) => void')
  const items = (Array.isArray(source) ? source : [source]).flatMap((x) => isClient(x) ? descriptorsOfClient(x, onWarning) : [x])
  const contracts = new Map()
  const plain = new Map() // wire -> stream
  const subs = new Map()
  const schemaOf = (d, where) => {
    if (d.schema !== null) return d.schema
    if (strict) throw invalidArgument(`zeromesh/http: ${where} has no JSON Schema: ${d.missing} (strict: false describes it as an open schema)`)
    onWarning(`zeromesh/http: ${where} has no JSON Schema (${d.missing}): described as an open schema {}`)
    return {}
  }
  const subscribe = (event, group, durable = false) => {
    if (typeof event !== 'string' || typeof group !== 'string') return
    const key = `${event}\0${group}`
    const had = subs.get(key)
    subs.set(key, { event, group, durable: durable === true || had?.durable === true })
  }
  // Contracts in hand first: their schemas are the real ones, a peer's statement of the same contract adds nothing.
  const given = new Set()
  const described = [] // [contract as stated by a peer]
  for (const item of items) {
    if (item?.[CONTRACT] === true && typeof item.name === 'string' && item.methods !== undefined) {
      given.add(item.name)
      contracts.set(item.name, fromContract(item, schemaOf))
    } else if (item !== null && typeof item === 'object' && item[CONTRACT] !== undefined) { // an implement() result
      const c = item[CONTRACT]
      if (!given.has(c.name)) { given.add(c.name); contracts.set(c.name, fromContract(c, schemaOf)) }
      for (const s of item[SUBSCRIPTIONS] ?? []) subscribe(s.event, s.group)
    } else if (item?.[SUBSCRIPTION] === true) {
      subscribe(item.event, item.group)
    } else if (item !== null && typeof item === 'object' && Array.isArray(item.methods)) { // a service descriptor
      const streams = new Set(item.streams ?? [])
      const inContracts = new Set()
      for (const c of item.contracts ?? []) {
        described.push(c)
        for (const m of c.methods ?? []) inContracts.add(m.name)
      }
      for (const m of item.methods) if (!inContracts.has(m) && typeof m === 'string') plain.set(m, streams.has(m) || plain.get(m) === true)
      for (const s of item.events ?? []) subscribe(s.event, s.group, s.durable) // durable: the extension point for durable subscriptions (JetStream consumers), once peers state it
    } else {
      throw invalidArgument('zeromesh/http: describe a Client, or contracts (contract()), implement() results, on() subscriptions and service descriptors (client.describe()), one or an array')
    }
  }
  // Contracts stated by peers: one per name, the highest version when peers differ.
  const stated = new Map()
  for (const c of described) {
    if (given.has(c.name)) continue
    const had = stated.get(c.name)
    if (had === undefined) { stated.set(c.name, c); continue }
    if (had.version !== c.version) {
      const newer = c.version !== null && (had.version === null || compareVersions(c.version, had.version) > 0)
      onWarning(`zeromesh/http: contract ${c.name} is served at versions ${had.version ?? '(none)'} and ${c.version ?? '(none)'}: described at ${newer ? c.version : had.version}`)
      if (newer) stated.set(c.name, c)
    }
  }
  for (const c of stated.values()) contracts.set(c.name, fromStated(c, schemaOf))
  const inContract = new Set([...contracts.values()].flatMap((c) => c.methods.map((m) => m.wire)))
  const methods = [...plain].filter(([wire]) => !inContract.has(wire)).sort(([a], [b]) => a < b ? -1 : 1)
    .map(([wire, stream]) => ({ contract: null, method: wire, wire, stream, input: {}, output: {} }))
  const subscriptions = [...subs.values()].sort((a, b) => a.event === b.event ? (a.group < b.group ? -1 : 1) : a.event < b.event ? -1 : 1)
  return { contracts: new Map([...contracts].sort(([a], [b]) => a < b ? -1 : 1)), methods, subscriptions }
}

/** A Client, by its public API: something with peers() and request(). */
export function isClient (x) {
  return x !== null && typeof x === 'object' && typeof x.peers === 'function' && typeof x.request === 'function'
}

function descriptorsOfClient (client, onWarning) {
  const out = []
  let older = 0
  for (const p of client.peers()) {
    if (p.state === 'down' || p.service === null || p.service === undefined) continue
    if (p.service === 'any') { older++; continue }
    out.push(p.service)
  }
  if (older > 0) onWarning(`zeromesh/http: ${older} peer(s) older than service descriptors may serve any method: what they serve is not described`)
  return out
}

function fromContract (c, schemaOf) {
  const where = (what) => `contract ${c.name}: ${what}`
  return {
    name: c.name,
    version: c.version,
    methods: Object.entries(c.methods).map(([method, m]) => ({
      contract: c.name,
      method,
      wire: m.wire,
      stream: m.stream,
      input: schemaOf(fromStandard(m.input, 'input'), where(`${method}.input`)),
      output: schemaOf(fromStandard(m.output, 'output'), where(`${method}.output`)),
    })),
    events: Object.values(c.events).map((e) => ({ contract: c.name, name: e.name, wire: e.wire, payload: schemaOf(fromStandard(e.schema, 'input'), where(`events.${e.name}`)) })),
  }
}

function fromStated (c, schemaOf) {
  const stated = (s) => ({ schema: s !== null && typeof s === 'object' ? s : null, missing: 'the peer stated none: its schema library gives no JSON Schema, or the schema is one JSON Schema cannot express, or it was over the size a peer states' })
  const where = (what) => `contract ${c.name} (as peers state it): ${what}`
  return {
    name: c.name,
    version: c.version ?? null,
    methods: (c.methods ?? []).map((m) => ({
      contract: c.name,
      method: m.method,
      wire: m.name,
      stream: m.stream === true,
      input: schemaOf(stated(m.input), where(`${m.method}.input`)),
      output: schemaOf(stated(m.output), where(`${m.method}.output`)),
    })),
    events: (c.events ?? []).map((e) => ({ contract: c.name, name: e.event, wire: e.name, payload: schemaOf(stated(e.payload), where(`events.${e.event}`)) })), // a stated event's name is its wire name, its event the contract's
  }
}

/** The JSON Schema 2020-12 of a Standard Schema's `side`, made by its library, or null and why (naming its vendor). */
function fromStandard (schema, side) {
  const std = schema['~standard']
  const vendor = typeof std.vendor === 'string' ? std.vendor : 'unknown'
  const make = std.jsonSchema?.[side]
  if (typeof make !== 'function') return { schema: null, missing: `its vendor "${vendor}" gives no Standard JSON Schema (~standard.jsonSchema; zod 4.2+, arktype 2.1.28+ and valibot through @valibot/to-json-schema do)` }
  try {
    const js = make({ target: 'draft-2020-12' })
    if (js === null || typeof js !== 'object') return { schema: null, missing: `its vendor "${vendor}" gave no object` }
    return { schema: JSON.parse(JSON.stringify(js)), missing: null }
  } catch (err) {
    return { schema: null, missing: `its vendor "${vendor}" cannot express it in JSON Schema: ${err?.message ?? err}` }
  }
}

/** Where warnings go unless the caller says: process.emitWarning, code ZEROMESH_HTTP_SCHEMA. */
export function defaultWarning (message) {
  process.emitWarning(message, { code: 'ZEROMESH_HTTP_SCHEMA' })
}
