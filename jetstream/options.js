// durableEvents() options: defaults, one per line with the reason, and checks
// (docs/reference/durable.md lists them all).
import { checkOptions, int, fn, bool, loggerOption } from '../runtime/options.js'
import { invalidArgument } from '../protocol/errors.js'
import { subjectProblem } from './names.js'

export const durableDefaults = Object.freeze({
  servers: 'nats://127.0.0.1:4222', // NATS's own default
  stream: 'ZEROMESH_EVENTS', //        the stream durable events are stored in
  subjects: 'zeromesh.events', //      its subjects: <subjects>.<event>
  deadLetterStream: null, //           null: <stream>_DEAD, subjects <subjects>-dead.<event>
  createStreams: true, //              make the streams when missing (an operator may make them instead: false)
  duplicateWindow: 120000, //          a publish retried with the same id within this long is stored once (JetStream's duplicate_window)
  maxAge: 7 * 24 * 3600 * 1000, //     an event older than a week is dropped from the stream (0: kept until the stream's limits)
  replicas: 1, //                      one server; 3 in a NATS cluster
  start: 'new', //                     a new group reads the events stored from its creation on ('all': from the stream's start)
  ackWait: 10000, //                   a delivery whose peer says nothing for this long goes to another peer (the peer says "working" while its handler runs)
  timeout: 30000, //                   a handler running longer fails this attempt
  maxDeliver: 5, //                    attempts before the dead-letter stream
  backoff: Object.freeze([1000, 5000, 15000, 30000]), // wait before the 2nd, 3rd, 4th attempt...; the last repeats
  maxAckPending: 1000, //              a group's events out at once, all its peers together (1: one at a time, in order)
  maxInflight: null, //                a peer's durable events at once at most (null: its free places, what bounds its requests)
  maxPending: 1024, //                 publishes waiting for JetStream's answer at once; beyond, BUSY at once (no unbounded buffering)
  publishTimeout: 5000, //             a publish JetStream has not confirmed by then fails (retry with the same id: stored once)
  connectTimeout: 5000, //             durableEvents() fails if NATS does not answer by then
})

/** Checked options, each default filled in. */
export function resolveDurableOptions (given) {
  const o = checkOptions('durableEvents options', given, {
    events: eventsOption,
    servers: serversOption,
    connection: (v) => {
      if (v === undefined) return null
      if (v === null || typeof v !== 'object' || typeof v.publish !== 'function' || typeof v.status !== 'function') throw invalidArgument('connection must be a NatsConnection (from @nats-io/transport-node connect())')
      return v
    },
    stream: nameOption(durableDefaults.stream),
    subjects: subjectsOption,
    deadLetterStream: nameOption(durableDefaults.deadLetterStream),
    createStreams: bool(durableDefaults.createStreams),
    duplicateWindow: int(durableDefaults.duplicateWindow, 100, 7 * 24 * 3600 * 1000),
    maxAge: int(durableDefaults.maxAge, 0),
    replicas: int(durableDefaults.replicas, 1, 5),
    start: (v) => {
      if (v === undefined) return durableDefaults.start
      if (v !== 'new' && v !== 'all') throw invalidArgument(`start must be 'new' (events from a group's creation on) or 'all' (from the stream's start), got ${JSON.stringify(v)}`)
      return v
    },
    ackWait: int(durableDefaults.ackWait, 300, 3600000),
    timeout: int(durableDefaults.timeout, 1, 2 ** 31 - 1),
    maxDeliver: int(durableDefaults.maxDeliver, 1, 1000),
    backoff: (v) => {
      if (v === undefined) return durableDefaults.backoff
      if (!Array.isArray(v) || v.length === 0 || v.some((ms) => !Number.isInteger(ms) || ms < 0 || ms > 3600000)) throw invalidArgument('backoff must be a list of milliseconds, such as [1000, 5000, 15000]')
      return Object.freeze([...v])
    },
    maxAckPending: int(durableDefaults.maxAckPending, 1, 1000000),
    maxInflight: int(durableDefaults.maxInflight, 1, 1000000),
    maxPending: int(durableDefaults.maxPending, 1, 1000000),
    publishTimeout: int(durableDefaults.publishTimeout, 1, 2 ** 31 - 1),
    connectTimeout: int(durableDefaults.connectTimeout, 1, 2 ** 31 - 1),
    onDeadLetter: fn(null),
    logger: loggerOption,
  })
  o.deadLetterStream ??= `${o.stream}_DEAD`
  o.deadSubjects = `${o.subjects}-dead` // beside the stream's subjects, never under them (streams' subjects may not overlap)
  return o
}

function eventsOption (v) {
  if (!Array.isArray(v) || v.length === 0) throw invalidArgument('events must list the durable event names, such as [\'orders.placed\'] (the same list on every Peer and Client)')
  for (const e of v) {
    const problem = subjectProblem(e)
    if (problem !== null) throw invalidArgument(`events: durable event ${JSON.stringify(e)} ${problem}`)
  }
  return Object.freeze([...new Set(v)])
}

function serversOption (v) {
  if (v === undefined) return [durableDefaults.servers]
  const list = typeof v === 'string' ? v.split(',') : v
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'string' || s.length === 0)) throw invalidArgument('servers must be a NATS URL or a list of them, such as \'nats://127.0.0.1:4222\'')
  return list
}

function nameOption (def) {
  return (v, name) => {
    if (v === undefined) return def
    if (typeof v !== 'string' || !/^[A-Za-z0-9_-]{1,200}$/.test(v)) throw invalidArgument(`${name} must be a stream name of letters, digits, '_' and '-', got ${JSON.stringify(v)}`)
    return v
  }
}

function subjectsOption (v) {
  if (v === undefined) return durableDefaults.subjects
  const problem = subjectProblem(v)
  if (problem !== null) throw invalidArgument(`subjects ${JSON.stringify(v)} ${problem}`)
  return v
}
