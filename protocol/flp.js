// Tells the three kinds of incoming message apart by their frames, never by guessing:
// a zeromesh message is exactly one frame that starts with the signature; a 10/FLP
// heartbeat is the single frame "PING"; a 10/FLP request is two or more frames,
// [control][body...]. Anything else is invalid.
import { FLP_PING } from './constants.js'
import { hasSignature } from './codec.js'

export const Kind = Object.freeze({ ZEROMESH: 'zeromesh', FLP_PING: 'flp-ping', FLP_REQUEST: 'flp-request', INVALID: 'invalid' })

const PING = Buffer.from(FLP_PING)

/** @param {Buffer[]} frames the message without the routing-id frame */
export function classify (frames) {
  if (frames.length >= 2) return Kind.FLP_REQUEST
  if (frames.length !== 1) return Kind.INVALID
  const f = frames[0]
  if (hasSignature(f)) return Kind.ZEROMESH
  if (f.length === 4 && PING.equals(f)) return Kind.FLP_PING
  return Kind.INVALID
}
