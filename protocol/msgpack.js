// The MessagePack settings every frame is packed and unpacked with, and the frame header:
// any process, restarted or not, decodes any frame on its own (no shared record structures,
// no structured clone, int64 as numbers). Shared by the codecs (codec.js, frames.js, stream-codec.js).
import { Packr, Unpackr, RESERVE_START_SPACE } from 'msgpackr'
import { SIGNATURE, HEADER_SIZE, PROTOCOL_VERSION } from './constants.js'

export const packr = new Packr({ useRecords: false, structuredClone: false })
export const unpackr = new Unpackr({
  useRecords: false, mapsAsObjects: true, structuredClone: false, int64AsType: 'number',
})

// Packing relies on how msgpackr hands out results: each pack() returns a view of its current
// slab after the previous result, and a full slab is replaced, never rewritten, so a result
// stays intact however many packs follow (test/unit/codec-buffers.test.js checks this). That lets a
// frame be packed with its header's room reserved in front (no copy), and packed entries be
// kept until their frame is joined.

export function writeHead (out, at, type) {
  out[at] = SIGNATURE[0]; out[at + 1] = SIGNATURE[1]; out[at + 2] = SIGNATURE[2]
  out[at + 3] = PROTOCOL_VERSION
  out[at + 4] = type
}

/** A frame of `type` around `body`, packed with the header's room in front (no copy). */
export function frame (type, body) {
  const out = packr.pack(body, RESERVE_START_SPACE | HEADER_SIZE)
  writeHead(out, 0, type)
  return out
}

/** Writes a MessagePack array header for `n` items at `at`; returns the position after it. */
export function writeArrayHeader (out, at, n) {
  if (n < 16) { out[at] = 0x90 | n; return at + 1 }
  if (n < 65536) { out[at] = 0xdc; out[at + 1] = n >> 8; out[at + 2] = n & 0xff; return at + 3 }
  out[at] = 0xdd
  out.writeUInt32BE(n, at + 1)
  return at + 5
}

/** Bytes an array header for `n` items takes. */
export function arrayHeaderSize (n) {
  return n < 16 ? 1 : n < 65536 ? 3 : 5
}

export { RESERVE_START_SPACE }
