// The numbers of the wire format. Everything here is part of the protocol itself:
// WARNING: ONLY APPEND to the tables below. Never renumber or reuse a value.
// protocol/PROTOCOL.md is the normative description; test/unit/protocol-vectors.test.js holds
// this file and that document to each other.

/** First bytes of every zeromesh frame. 0xA7 can never start a UTF-8 string. */
export const SIGNATURE = Object.freeze([0xa7, 0x5a, 0x4d]) // "\xA7ZM"
export const HEADER_SIZE = 5 // signature (3) + version (1) + type (1)

/** Protocol versions this build speaks; a frame outside [MIN, MAX] is refused. */
export const PROTOCOL_VERSION = 1
export const PROTOCOL_VERSION_MIN = 1
export const PROTOCOL_VERSION_MAX = 1

/** Message types (byte 4 of a frame). Append only. */
export const MessageType = Object.freeze({
  REQUEST: 1, // client -> peer: one or more requests
  REPLY: 2, //   peer -> client: one or more replies, plus peer metadata
  PING: 3, //    either way: liveness probe
  PONG: 4, //    answer to PING
  ERROR: 5, //   peer -> sender: the frame could not be handled at all (version, type)
  PROBE: 6, //       peer -> peer: SWIM direct probe, with piggybacked membership claims
  ACK: 7, //         answer to PROBE (or to PROBE_REQ, for the target)
  PROBE_REQ: 8, //   peer -> peer: please probe the target for me
  NACK: 9, //        answer to PROBE_REQ: the target did not answer
  SYNC: 10, //       peer -> peer: full state exchange (push-pull); answered with SYNC
  MEMBERS_GET: 11, // client -> peer: send me your member list
  MEMBERS: 12, //    answer to MEMBERS_GET
  CANCEL: 13, //     client -> peer: drop these requests, the answer is no longer wanted
  SEALED: 14, //     peer -> peer in a secured cluster: a membership request and its tag (cluster key)
  SERVICE_GET: 15, // client -> peer: what do you serve?
  SERVICE: 16, //     answer to SERVICE_GET: the peer's own service descriptor
  KEY_PROOF: 17, //   client -> secured peer: proof that this connection holds a client key
  STREAM_OPEN: 18, //   client -> peer: open a stream (a request whose answer is many items)
  STREAM_ITEM: 19, //   either way: items of an open stream, within the receiver's credit
  STREAM_CREDIT: 20, // either way: the receiver grants more items and bytes (0, 0: still here)
  STREAM_END: 21, //    either way: the sender's side of a stream is over (done, or why not)
  EVENT: 22, //         client -> peer: one or more events for a subscribing group (or for every subscription), acknowledged by REPLY entries
})

/** What a peer can do beyond the base protocol: the bits of a SERVICE answer's `features`. Append only. */
export const Feature = Object.freeze({
  STREAMS: 1, // STREAM_OPEN, STREAM_ITEM, STREAM_CREDIT and STREAM_END (PROTOCOL.md 4.10)
  EVENTS: 2, //  EVENT, and the subscriptions in its SERVICE answer (PROTOCOL.md 4.11)
})

/** Bits of a REQUEST entry's `accepts` field (PROTOCOL.md 4.1): what the sender reads in its replies. Append only. */
export const Accepts = Object.freeze({
  BULK: 1, //   a large binary result in a ZeroMQ frame of its own after the reply frame (4.2.1)
  VALUES: 2, // a handler's several results in one reply, status VALUES (4.2.3)
})

/**
 * The smallest Buffer a peer sends in a bulk frame of its own (PROTOCOL.md 4.2.1). Below it
 * a copy into the reply frame costs less than a frame: measured in bench/results/earlier.md, "Bulk
 * frames".
 */
export const BULK_MIN_BYTES = 16 * 1024

/** Member states in membership claims. Append only. */
export const MemberState = Object.freeze({ ALIVE: 0, SUSPECT: 1, DEAD: 2, LEFT: 3 })
/**
 * Whether claim `b` about a member outranks claim `a` about it (PROTOCOL.md 4): a higher
 * incarnation wins; at the same incarnation the graver state (alive < suspect < dead < left).
 * Peers merge member tables by it, and clients take member-list claims by it.
 */
export function outranks (b, a) {
  if (b.incarnation !== a.incarnation) return b.incarnation > a.incarnation
  return b.state > a.state
}

/** The names of member states, by number, as `peer.members()` shows them. */
export const memberStateNames = Object.freeze(['alive', 'suspect', 'dead', 'left'])

/** Status of one reply entry. Append only. */
export const Status = Object.freeze({
  OK: 0,
  UNKNOWN_METHOD: 1, // no handler of that name
  REMOTE: 2, //         the handler threw; [message, code] travel back
  BUSY: 3, //           the peer is overloaded and did not start the request
  DRAINING: 4, //       the peer is stopping and did not start the request
  INVALID_REQUEST: 5, // the entry failed validation and was not run
  VALUES: 6, //          several results, in order (a request whose accepts has VALUES only)
})

/** A status's name by its number (`statusNames[3]` is 'BUSY'). */
export const statusNames = Object.freeze(Object.fromEntries(Object.entries(Status).map(([name, n]) => [n, name])))

/** Codes of an ERROR message. Append only. */
export const ProtocolErrorCode = Object.freeze({
  UNSUPPORTED_VERSION: 1,
  UNKNOWN_TYPE: 2,
})

/** 10/FLP (Freelance Protocol) heartbeat frames. */
export const FLP_PING = 'PING'
export const FLP_PONG = 'PONG'

/** Default limits. Each is an option of Peer and Client as well. */
export const Limits = Object.freeze({
  // Largest frame accepted or sent, in bytes. Set as ZMQ_MAXMSGSIZE on every socket, so a
  // larger frame drops that one connection; the client refuses to send one.
  maxMessageSize: 1024 * 1024,
  // Deepest nesting of arrays/objects accepted inside args or a result.
  maxDepth: 64,
  // Most entries (requests or replies) in one frame.
  maxBatch: 1024,
  // Longest method name, in UTF-16 code units.
  maxMethodLength: 256,
  // Most members in one SYNC or MEMBERS message.
  maxMembers: 65535,
  // Deepest nesting of a member's metadata.
  maxMetaDepth: 8,
  // Largest member metadata, in bytes packed as MessagePack (memberlist's limit too), so a
  // member list of N members stays within N x ~800 bytes.
  maxMetaBytes: 512,
  // Most method names in one peer's service descriptor (a SERVICE answer).
  maxMethods: 1024,
  // Longest service version string (semver).
  maxVersionLength: 64,
  // Most labels on one peer, and the longest label key or value.
  maxLabels: 32,
  maxLabelLength: 63,
  // A request's trace field (a propagator's carrier): most fields, longest key, longest value.
  maxTraceFields: 8,
  maxTraceKeyLength: 64,
  maxTraceValueLength: 1024,
  // Streams open on one peer, over all its connections, and on one connection.
  maxStreams: 1024,
  maxStreamsPerConnection: 64,
  // Most credit one side of a stream may grant the other at once, in items and in bytes.
  maxCreditItems: 1024,
  maxCreditBytes: 64 * 1024 * 1024,
  // Request headers (PROTOCOL.md 4.1): most entries, longest key, longest value, and the most
  // characters of keys and values together.
  maxHeaders: 32,
  maxHeaderKeyLength: 64,
  maxHeaderValueLength: 4096,
  maxHeaderBytes: 8192,
  // The issues riding beside an INVALID_INPUT refusal (PROTOCOL.md 4.2): most issues, longest
  // message, most path segments, longest segment. A sender cuts to these.
  maxIssues: 32,
  maxIssueMessageLength: 512,
  maxIssuePathLength: 32,
  maxIssueSegmentLength: 128,
  // The contracts in a SERVICE answer (PROTOCOL.md 4.8): the largest JSON Schema of one
  // method's input or output, and of the whole element, packed. A sender leaves out (nil)
  // a schema over the first, and every schema when the element would pass the second.
  maxSchemaBytes: 64 * 1024,
  maxContractsBytes: 256 * 1024,
  // Event names and group names: the longest, in UTF-16 code units (as method names); and the
  // most subscriptions one peer states in its SERVICE answer (PROTOCOL.md 4.11).
  maxEventLength: 256,
  maxSubscriptions: 1024,
})

/**
 * How far ahead of the receiver's wall clock (ms since 1970) an incarnation may be. Peers
 * start at their wall-clock time and count up by one per refutation, so an honest
 * incarnation is never far ahead; a claim beyond the horizon is refused, so no claim can push
 * a member's incarnation out of reach of its refutation (PROTOCOL.md 4.6).
 */
export const INCARNATION_HORIZON_MS = 24 * 60 * 60 * 1000

/**
 * How long a peer waits by default for a word from a stream's client while the stream waits
 * for it (peer option streamIdleTimeout): a client says "still here" every third of it
 * (PROTOCOL.md 4.10). Also the longest a full pipe may hold a stream's frames back when no
 * idle timeout is set, on either side.
 */
export const STREAM_IDLE_MS = 30000

/** Largest request id: ids must stay exact in a JS number. */
export const MAX_REQUEST_ID = Number.MAX_SAFE_INTEGER
