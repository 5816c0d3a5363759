// Encode and decode zeromesh frames: a 5-byte header (signature, version, type) and one
// MessagePack value. Settings are chosen so that any process, restarted or not, decodes
// any frame on its own: no shared record structures, no structured clone, int64 as numbers.
import {
  HEADER_SIZE, PROTOCOL_VERSION_MIN, PROTOCOL_VERSION_MAX,
  MessageType, Status, ProtocolErrorCode, Limits, SIGNATURE, Accepts,
} from './constants.js'
import { checkValue, checkList, checkMeta, isUint, fail, traceCarrier } from './validate.js'
import { readIssues } from './issues.js'
import { readContracts } from './contracts.js'
import { readHeaders, NO_HEADERS } from './headers.js'
import { isWireEndpoint } from './endpoint.js'
import { descriptorProblem, describe, serviceDigest } from './service.js'
import { packr, unpackr, frame } from './msgpack.js'
import { decodeStream, STREAM_TYPES } from './stream-codec.js'
import { decodeEvent } from './event-codec.js'
import { eventsProblem } from './events.js'
import { streamsProblem } from './stream-methods.js'

const knownTypes = new Set(Object.values(MessageType))
const NO_BULK = Object.freeze([]) // a message of one frame
const AFTER_HEADER = Object.freeze({ start: HEADER_SIZE }) // unpack the body in place, no view per frame

/** Whether a frame starts with the zeromesh signature (whatever its version). */
export function hasSignature (frame) {
  return frame.length >= 3 && frame[0] === SIGNATURE[0] && frame[1] === SIGNATURE[1] && frame[2] === SIGNATURE[2]
}

/**
 * A REQUEST frame carrying one or more requests.
 * @param {Array<[id: number, method: string, args: unknown, timeoutMs: number]>} entries
 */
export function encodeRequest (entries) {
  return frame(MessageType.REQUEST, entries)
}

/**
 * A REPLY frame. `meta` is a map of peer information (unknown keys are ignored by
 * receivers); each entry is [id, status, value] where value is the result for Status.OK
 * and [message, code|null] for any other status.
 */
export function encodeReply (meta, entries) {
  return frame(MessageType.REPLY, [meta, entries])
}

export function encodePing (seq) {
  return frame(MessageType.PING, [seq])
}

export function encodePong (seq, meta) {
  return frame(MessageType.PONG, [seq, meta])
}

/** A KEY_PROOF frame: a client's public key (32 bytes) and its proof (32 bytes) (PROTOCOL.md 4.9). */
export function encodeKeyProof (key, mac) {
  return frame(MessageType.KEY_PROOF, [key, mac])
}

const gossipTypes = {
  probe: MessageType.PROBE,
  ack: MessageType.ACK,
  'probe-req': MessageType.PROBE_REQ,
  nack: MessageType.NACK,
  sync: MessageType.SYNC,
}

/**
 * A claim as the wire has it: [endpoint, incarnation, state, meta, by?, service?]. `service`
 * (the digest of what the member serves, PROTOCOL.md 4.8) comes after `by`, which is then nil
 * when there is no suspicion: older decoders ignore the extra element.
 */
function claim (c) {
  const service = c.service ?? null
  if (service !== null) return [c.endpoint, c.incarnation, c.state, c.meta ?? {}, c.by ?? null, service]
  return c.by === undefined
    ? [c.endpoint, c.incarnation, c.state, c.meta ?? {}]
    : [c.endpoint, c.incarnation, c.state, c.meta ?? {}, c.by]
}

/**
 * A membership frame between peers. `msg` is { type: 'probe'|'ack'|'probe-req'|'nack'|'sync',
 * from, target?, updates?, members? }; claims are { endpoint, incarnation, state, meta, by? }.
 */
export function encodeGossip (seq, msg) {
  const type = gossipTypes[msg.type]
  switch (type) {
    case MessageType.PROBE:
    case MessageType.PROBE_REQ: return frame(type, [seq, msg.from, msg.target, msg.updates.map(claim)])
    case MessageType.ACK: return frame(type, [seq, msg.from, msg.updates.map(claim)])
    case MessageType.NACK: return frame(type, [seq, msg.from])
    case MessageType.SYNC: return frame(type, [seq, msg.from, msg.members.map(claim)])
    default: throw new TypeError(`not a membership message: ${msg.type}`)
  }
}

/** A membership request sealed with its tag (protocol/seal.js): [tag, frame]. */
export function encodeSealed (tag, inner) {
  return frame(MessageType.SEALED, [tag, inner])
}

/** A client's cancellation of requests it sent on this connection. */
export function encodeCancel (ids) {
  return frame(MessageType.CANCEL, ids)
}

/** A client's request for a peer's member list. */
export function encodeMembersGet (seq) {
  return frame(MessageType.MEMBERS_GET, [seq])
}

/** A peer's member list, with the digest clients compare (`version`). */
export function encodeMembers (seq, version, members) {
  return frame(MessageType.MEMBERS, [seq, version, members.map(claim)])
}

/** A client's question: what does this peer serve? */
export function encodeServiceGet (seq) {
  return frame(MessageType.SERVICE_GET, [seq])
}

/** A peer's answer: its own service descriptor (protocol/service.js describe()). */
export function encodeService (seq, d, features = 0) {
  const body = [seq, d.digest, d.methods, d.version, d.labels, d.capacity, features]
  // The optional elements (contracts, events, streams) in order, nil before a later one.
  const optional = [d.contracts ?? null, d.events ?? null, d.streams ?? null]
  let last = optional.length
  while (last > 0 && optional[last - 1] === null) last--
  for (let i = 0; i < last; i++) body.push(optional[i])
  return frame(MessageType.SERVICE, body)
}

/** An ERROR frame: the peer could not handle a frame at all. */
export function encodeError (code, message) {
  return frame(MessageType.ERROR, [code, message, PROTOCOL_VERSION_MIN, PROTOCOL_VERSION_MAX])
}

/**
 * Decode and validate one frame. Returns a plain message object, or throws ProtocolError.
 * A ProtocolError with `protocolCode` set is one the sender should be told about with an
 * ERROR frame (unsupported version, unknown type); any other is dropped and counted.
 * @param {Uint8Array} buf
 * @param {Partial<typeof Limits>} [limits]
 */
export function decode (buf, limits = Limits, bulk = NO_BULK) {
  const maxMessageSize = limits.maxMessageSize ?? Limits.maxMessageSize
  const maxDepth = limits.maxDepth ?? Limits.maxDepth
  const maxBatch = limits.maxBatch ?? Limits.maxBatch
  if (!(buf instanceof Uint8Array)) throw fail('frame must be bytes')
  if (buf.length > maxMessageSize) throw fail(`frame of ${buf.length} bytes is larger than ${maxMessageSize}`)
  if (buf.length < HEADER_SIZE + 1) throw fail(`frame of ${buf.length} bytes is too short`)
  if (!hasSignature(buf)) throw fail('frame has no zeromesh signature')
  const version = buf[3]
  if (version < PROTOCOL_VERSION_MIN || version > PROTOCOL_VERSION_MAX) {
    const err = fail(`protocol version ${version} is not supported (${PROTOCOL_VERSION_MIN}..${PROTOCOL_VERSION_MAX})`)
    err.protocolCode = ProtocolErrorCode.UNSUPPORTED_VERSION
    throw err
  }
  const type = buf[4]
  if (!knownTypes.has(type)) {
    const err = fail(`unknown message type ${type}`)
    err.protocolCode = ProtocolErrorCode.UNKNOWN_TYPE
    throw err
  }
  if (bulk.length > 0 && type !== MessageType.REPLY && type !== MessageType.STREAM_ITEM) throw fail(`a message of type ${type} has no bulk frames (PROTOCOL.md 4.2.1)`)
  let body
  try {
    body = unpackr.unpack(buf, AFTER_HEADER)
  } catch (cause) {
    // msgpackr throws Error or RangeError (deep nesting); both become a ProtocolError.
    const err = fail(`undecodable body: ${cause?.message ?? cause}`)
    err.cause = cause
    throw err
  }
  switch (type) {
    case MessageType.REQUEST: return decodeRequest(body, version, maxBatch, maxDepth, limits.maxMethodLength ?? Limits.maxMethodLength)
    case MessageType.REPLY: return decodeReply(body, version, maxBatch, maxDepth, bulk, maxMessageSize)
    case MessageType.PING: return decodePing(body, version)
    case MessageType.PONG: return decodePong(body, version)
    case MessageType.ERROR: return decodeError(body, version)
    case MessageType.MEMBERS_GET: return decodeMembersGet(body, version)
    case MessageType.MEMBERS: return decodeMembers(body, version, limits)
    case MessageType.CANCEL: return decodeCancel(body, version, limits.maxBatch ?? Limits.maxBatch)
    case MessageType.SEALED: return decodeSealed(body, version)
    case MessageType.SERVICE_GET: return decodeServiceGet(body, version)
    case MessageType.KEY_PROOF: return decodeKeyProof(body, version)
    case MessageType.SERVICE: return decodeService(body, version, limits)
    case MessageType.EVENT: return decodeEvent(body, version, limits)
    default:
      if (STREAM_TYPES.has(type)) return decodeStream(type, body, version, limits, bulk)
      return decodeGossip(type, body, version, limits)
  }
}

const gossipNames = { [MessageType.PROBE]: 'probe', [MessageType.ACK]: 'ack', [MessageType.PROBE_REQ]: 'probe-req', [MessageType.NACK]: 'nack', [MessageType.SYNC]: 'sync' }

function endpointField (v, what) {
  if (!isWireEndpoint(v)) throw fail(`${what} must be a connectable endpoint in normal form (PROTOCOL.md 1.1)`)
  return v
}

/** Bytes `meta` takes packed as MessagePack: what the meta limit counts. */
export function metaSize (meta) {
  return packr.pack(meta).length
}

function decodeClaims (list, what, max, limits) {
  if (!Array.isArray(list)) throw fail(`${what} must be an array`)
  if (list.length > max) throw fail(`${what} has ${list.length} entries, more than ${max}`)
  const maxMetaDepth = limits.maxMetaDepth ?? Limits.maxMetaDepth
  const maxMetaBytes = limits.maxMetaBytes ?? Limits.maxMetaBytes
  const out = new Array(list.length)
  for (let i = 0; i < list.length; i++) {
    const c = list[i]
    if (!Array.isArray(c) || c.length < 4) throw fail('a claim must be [endpoint, incarnation, state, meta, by?, service?]')
    const [endpoint, incarnation, state, meta, by, service] = c
    endpointField(endpoint, 'a claim endpoint')
    if (!isUint(incarnation)) throw fail('a claim incarnation must be an integer from 0 to 2^53-1')
    if (!isUint(state, 3)) throw fail('a claim state must be 0 (alive), 1 (suspect), 2 (dead) or 3 (left)')
    checkMeta(meta)
    const reason = checkValue(meta, maxMetaDepth)
    if (reason !== null) throw fail(`claim meta: ${reason}`)
    const size = metaSize(meta)
    if (size > maxMetaBytes) throw fail(`claim meta of ${size} bytes is larger than ${maxMetaBytes}`)
    const entry = { endpoint, incarnation, state, meta }
    if (by !== undefined && by !== null) entry.by = endpointField(by, 'a claim "by"')
    if (service !== undefined && service !== null) {
      if (!isUint(service, 0xffffffff)) throw fail('a claim\'s service digest must be an integer from 0 to 2^32-1')
      entry.service = service
    }
    out[i] = entry
  }
  return out
}

function decodeGossip (type, body, version, limits) {
  if (!Array.isArray(body) || !isUint(body[0])) throw fail('a membership message must start with [seq, from, ...]')
  const seq = body[0]
  const from = endpointField(body[1], 'from')
  const maxBatch = limits.maxBatch ?? Limits.maxBatch
  const msg = { type: gossipNames[type], from }
  switch (type) {
    case MessageType.PROBE:
    case MessageType.PROBE_REQ:
      msg.target = endpointField(body[2], 'target')
      msg.updates = decodeClaims(body[3], 'updates', maxBatch, limits)
      break
    case MessageType.ACK:
      msg.updates = decodeClaims(body[2], 'updates', maxBatch, limits)
      break
    case MessageType.SYNC:
      msg.members = decodeClaims(body[2], 'members', limits.maxMembers ?? Limits.maxMembers, limits)
      break
    default: // NACK
  }
  return { type, version, seq, gossip: msg }
}

function decodeCancel (body, version, maxBatch) {
  checkList(body, 'cancel list', maxBatch)
  for (const id of body) if (!isUint(id)) throw fail('a cancelled request id must be an integer from 0 to 2^53-1')
  return { type: MessageType.CANCEL, version, ids: body }
}

function decodeSealed (body, version) {
  if (!Array.isArray(body) || body.length < 2 || !(body[0] instanceof Uint8Array) || body[0].length !== 32 || !(body[1] instanceof Uint8Array)) {
    throw fail('a sealed message must be [tag (32 bytes), frame (bytes)]')
  }
  return { type: MessageType.SEALED, version, tag: body[0], inner: body[1] }
}

function decodeMembersGet (body, version) {
  if (!Array.isArray(body) || !isUint(body[0])) throw fail('a members request must be [seq]')
  return { type: MessageType.MEMBERS_GET, version, seq: body[0] }
}

function decodeServiceGet (body, version) {
  if (!Array.isArray(body) || !isUint(body[0])) throw fail('a service request must be [seq]')
  return { type: MessageType.SERVICE_GET, version, seq: body[0] }
}

function decodeService (body, version, limits) {
  if (!Array.isArray(body) || body.length < 6 || !isUint(body[0]) || !isUint(body[1], 0xffffffff)) {
    throw fail('a service answer must be [seq, digest, methods, version, labels, capacity]')
  }
  const d = { methods: body[2], version: body[3], labels: body[4], capacity: body[5] }
  const problem = descriptorProblem(d, limits)
  if (problem !== null) throw fail(`service answer: ${problem}`)
  const digest = serviceDigest(d)
  if (digest !== body[1]) throw fail(`service answer: digest ${body[1]} is not the digest of its contents (${digest})`)
  // `features` (PROTOCOL.md 4.8): what the peer can do beyond the base protocol; not in the digest.
  const features = isUint(body[6], 0xffffffff) ? body[6] : 0
  // `contracts` (4.8): what the methods take and give, for describe(); not for routing, so a
  // malformed one is left out, not the answer.
  d.contracts = body.length > 7 && readContracts(body[7]) !== null ? body[7] : null
  // `events` (4.11): the peer's subscriptions; a malformed element is left out (the peer then
  // takes no events from this client), not the answer.
  d.events = body.length > 8 && body[8] !== null && eventsProblem(body[8]) === null ? body[8] : null
  // `streams` (4.8.2): the methods served as streams; a malformed element is left out (a caller
  // then cannot tell which of its methods stream), not the answer.
  d.streams = body.length > 9 && body[9] !== null && streamsProblem(body[9], new Set(d.methods)) === null ? body[9] : null
  return { type: MessageType.SERVICE, version, seq: body[0], service: describe(d), features }
}

function decodeMembers (body, version, limits) {
  if (!Array.isArray(body) || !isUint(body[0]) || !isUint(body[1], 0xffffffff)) throw fail('a member list must be [seq, version, members]')
  return { type: MessageType.MEMBERS, version, seq: body[0], membersVersion: body[1], members: decodeClaims(body[2], 'members', limits.maxMembers ?? Limits.maxMembers, limits) }
}

function decodeRequest (body, version, maxBatch, maxDepth, maxMethodLength) {
  checkList(body, 'request list', maxBatch)
  const requests = []
  const invalid = [] // entries with a usable id but a bad field: answered INVALID_REQUEST
  for (let i = 0; i < body.length; i++) {
    const e = body[i]
    if (!Array.isArray(e) || e.length < 4) throw fail('a request entry must be [id, method, args, timeoutMs]')
    const id = e[0]; const method = e[1]; const args = e[2]; const timeoutMs = e[3]
    if (!isUint(id)) throw fail('a request id must be an integer from 0 to 2^53-1')
    let reason = null
    if (typeof method !== 'string' || method.length === 0 || method.length > maxMethodLength) {
      reason = `method must be a string of 1 to ${maxMethodLength} characters`
    } else if (!isUint(timeoutMs)) {
      reason = 'timeoutMs must be a non-negative integer'
    } else {
      reason = checkValue(args, maxDepth)
    }
    // headers (e[6], 4.1): a map of strings within limits, or nil; anything else is refused.
    let headers = NO_HEADERS
    if (reason === null && e.length > 6) {
      const h = readHeaders(e[6])
      if (h.reason !== undefined) reason = h.reason
      else headers = h.headers
    }
    // accepts (e[5]): bits of Accepts; anything but a uint reads as 0 (the sender reads plain replies).
    const accepts = e.length > 5 && isUint(e[5], 0xffffffff) ? e[5] : 0
    if (reason === null) requests.push({ id, method, args, timeoutMs, trace: e.length > 4 ? traceCarrier(e[4]) : null, bulk: (accepts & Accepts.BULK) !== 0, values: (accepts & Accepts.VALUES) !== 0, headers })
    else invalid.push({ id, reason })
  }
  return { type: MessageType.REQUEST, version, requests, invalid }
}

function decodeReply (body, version, maxBatch, maxDepth, bulk, maxMessageSize) {
  if (!Array.isArray(body) || body.length < 2) throw fail('a reply must be [meta, entries]')
  const meta = checkMeta(body[0])
  const list = checkList(body[1], 'reply list', maxBatch)
  const replies = new Array(list.length)
  let bulkUsed = 0 // bulk frames named so far: each exactly once, in order (PROTOCOL.md 4.2.1)
  for (let i = 0; i < list.length; i++) {
    const e = list[i]
    if (!Array.isArray(e) || e.length < 3) throw fail('a reply entry must be [id, status, value]')
    const id = e[0]; const status = e[1]; const value = e[2]
    if (!isUint(id)) throw fail('a reply id must be an integer from 0 to 2^53-1')
    if (!isUint(status, 255)) throw fail('a reply status must be an integer from 0 to 255')
    if (e.length > 3 && e[3] != null) { // nil or undefined: no bulk reference
      if (status !== Status.OK || value !== null || e[3] !== bulkUsed || bulkUsed >= bulk.length) throw fail('a bulk reply entry must be [id, 0, nil, k], k the next bulk frame of its message')
      const bytes = bulk[bulkUsed++]
      if (!(bytes instanceof Uint8Array) || bytes.length > maxMessageSize) throw fail(`bulk frame ${e[3]} must be bytes of at most ${maxMessageSize}`)
      replies[i] = { id, status, value: bytes }
    } else if (status === Status.OK) {
      const reason = checkValue(value, maxDepth)
      if (reason !== null) throw fail(`reply value: ${reason}`)
      replies[i] = { id, status, value }
    } else if (status === Status.VALUES) { // 4.2.3: the results, in order
      if (!Array.isArray(value)) throw fail('a VALUES reply entry\'s value must be an array of results')
      const reason = checkValue(value, maxDepth)
      if (reason !== null) throw fail(`reply value: ${reason}`)
      replies[i] = { id, status, value }
    } else {
      if (!Array.isArray(value) || typeof value[0] !== 'string' || (value[1] != null && typeof value[1] !== 'string')) {
        throw fail('an error reply value must be [message, code|nil]')
      }
      replies[i] = { id, status, message: value[0], code: value[1] ?? null }
      if (value.length > 2) replies[i].issues = readIssues(value[2]) // PROTOCOL.md 4.2: a refused input's issues
    }
  }
  if (bulkUsed !== bulk.length) throw fail(`a reply names ${bulkUsed} bulk frames and came with ${bulk.length}`)
  return { type: MessageType.REPLY, version, meta, replies }
}

function decodePing (body, version) {
  if (!Array.isArray(body) || !isUint(body[0])) throw fail('a ping must be [seq]')
  return { type: MessageType.PING, version, seq: body[0] }
}

function decodeKeyProof (body, version) {
  const bytes32 = (x) => x instanceof Uint8Array && x.length === 32
  if (!Array.isArray(body) || body.length < 2 || !bytes32(body[0]) || !bytes32(body[1])) throw fail('a key proof must be [key (32 bytes), mac (32 bytes)]')
  return { type: MessageType.KEY_PROOF, version, key: Buffer.from(body[0]), mac: Buffer.from(body[1]) }
}

function decodePong (body, version) {
  if (!Array.isArray(body) || !isUint(body[0])) throw fail('a pong must be [seq, meta]')
  return { type: MessageType.PONG, version, seq: body[0], meta: checkMeta(body[1]) }
}

function decodeError (body, version) {
  if (!Array.isArray(body) || !isUint(body[0], 255) || typeof body[1] !== 'string' ||
      !isUint(body[2], 255) || !isUint(body[3], 255)) {
    throw fail('an error must be [code, message, minVersion, maxVersion]')
  }
  return { type: MessageType.ERROR, version, code: body[0], message: body[1], minVersion: body[2], maxVersion: body[3] }
}
