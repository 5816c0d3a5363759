// zeromesh/protocol: what an implementation of the wire format needs (protocol/PROTOCOL.md):
// its numbers and limits, the codec, the service digest, the key proof, and the errors it
// raises. No sockets here. Every name is listed: each is under the README's promise (README, "Stability").
export {
  SIGNATURE, HEADER_SIZE, PROTOCOL_VERSION, PROTOCOL_VERSION_MIN, PROTOCOL_VERSION_MAX,
  MessageType, Feature, Accepts, BULK_MIN_BYTES, MemberState, memberStateNames, outranks, Status, statusNames,
  ProtocolErrorCode, FLP_PING, FLP_PONG, Limits, INCARNATION_HORIZON_MS, STREAM_IDLE_MS, MAX_REQUEST_ID,
} from './constants.js'
export {
  ZeromeshError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError, DrainingError,
  ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, ProtocolError, HandshakeError,
  UserCodeError, InvalidInputError, InvalidOutputError, NoSubscribersError, RemoteCode,
} from './errors.js'
export {
  encodeRequest, encodeReply, encodePing, encodePong, encodeError, encodeGossip, encodeMembersGet, encodeMembers,
  encodeCancel, encodeSealed, encodeServiceGet, encodeService, encodeKeyProof, decode, hasSignature,
} from './codec.js'
export { encodeStreamOpen, encodeStreamItems, encodeStreamCredit, encodeStreamEnd } from './stream-codec.js'
export { encodeEvent } from './event-codec.js'
export { serviceDigest, describe as describeService } from './service.js'
export { keyProof, checkKeyProof } from './key-proof.js'
