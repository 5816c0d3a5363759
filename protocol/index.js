// The wire format of zeromesh: constants, codec, validation, FLP classification, errors.
// No sockets here.
export * from './constants.js'
export * from './errors.js'
export { encodeRequest, encodeReply, encodePing, encodePong, encodeError, encodeGossip, encodeMembersGet, encodeMembers, encodeCancel, encodeSealed, encodeServiceGet, encodeService, encodeKeyProof, decode, hasSignature } from './codec.js'
export { encodeStreamOpen, encodeStreamItems, encodeStreamCredit, encodeStreamEnd } from './stream-codec.js'
export { serviceDigest, describe as describeService } from './service.js'
export { sealKey, seal, unseal } from './seal.js'
export { keyProof, checkKeyProof } from './key-proof.js'
export { classify, Kind } from './flp.js'
export { checkValue } from './validate.js'
