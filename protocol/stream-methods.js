// The methods a peer serves as streams (PROTOCOL.md 4.8.2): the optional tenth element of its
// SERVICE answer, their names sorted by code units. A caller that knows only a method's name
// (a NestJS ClientProxy's send(), say) learns from it whether to open a stream (4.10) or send
// a request (4.1) before the first byte. Like the contracts and events elements, it is not in
// the descriptor's digest text, which older clients recompute: a peer with stream methods
// states the label STREAMS_LABEL (the digest of this element), so a change of it changes the
// descriptor's digest and every client asks the peer again.
import { fnv1a } from './fnv.js'
import { byCodeUnits } from './code-units.js'

/** The label a peer with stream methods states: the FNV-1a digest of its streams element, 8 hex digits. */
export const STREAMS_LABEL = 'zeromesh/streams'

/** The streams element of `names` (methods served as streams): sorted by code units, each once; null when there are none. */
export function streamsElement (names) {
  if (names.length === 0) return null
  return [...new Set(names)].sort(byCodeUnits)
}

/** The STREAMS_LABEL value of an element: FNV-1a of each name followed by a line feed, in order, 8 hex digits. */
export function streamsDigest (element) {
  let text = ''
  for (const m of element) text += `${m}\n`
  return fnv1a(text).toString(16).padStart(8, '0')
}

/** Why `v` is not a valid streams element of a descriptor serving `methods` (a Set), or null. */
export function streamsProblem (v, methods) {
  if (!Array.isArray(v) || v.length === 0) return 'streams must be a non-empty array of method names'
  let prev = null
  for (const m of v) {
    if (typeof m !== 'string' || !methods.has(m)) return 'streams must name methods the answer lists'
    if (prev !== null && byCodeUnits(prev, m) >= 0) return 'streams must be sorted by code units, each listed once'
    prev = m
  }
  return null
}
