// FNV-1a, 32 bit, over a string's UTF-16 code units: each 16-bit unit folded in whole (not its
// UTF-8 bytes). The digests of the wire are made with it: the membership digest (PROTOCOL.md
// 4.6) and the service digest (4.8), which states the check values.

/** FNV-1a (offset basis 0x811c9dc5, prime 0x01000193) of `text`'s UTF-16 code units, as a uint32. */
export function fnv1a (text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}
