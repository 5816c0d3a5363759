// Key affinity by rendezvous (highest random weight) hashing: each peer scores
// hash(key, endpoint) and the key goes to the highest score among the healthy peers. While
// the set of up peers stays the same, a key always lands on the same peer; when a peer goes,
// only its keys move (each to its own second choice); when a peer comes, only the keys it now
// wins (about 1/N) move to it. Retries of a keyed request go down the same ranking.

/** 32-bit FNV-1a of `key` then `endpoint`, finished with a murmur3 mix for spread. */
export function score (key, endpoint) {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  h = Math.imul(h ^ 0x1f, 0x01000193) // separator, so ("ab","c") and ("a","bc") differ
  for (let i = 0; i < endpoint.length; i++) h = Math.imul(h ^ endpoint.charCodeAt(i), 0x01000193)
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** The peer among `peers` that `key` goes to. */
export function pickByKey (peers, key) {
  let best = peers[0]
  let bestScore = -1
  for (const p of peers) {
    const s = score(key, p.endpoint)
    if (s > bestScore || (s === bestScore && p.endpoint < best.endpoint)) { best = p; bestScore = s }
  }
  return best
}
