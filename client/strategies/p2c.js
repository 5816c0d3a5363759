// Power of two choices over a latency-weighted load (the Finagle/Linkerd "peak EWMA"
// balancer): pick two healthy peers at random, send to the one with the lower cost, where
// cost = peak-EWMA latency x (1 + requests outstanding). Outstanding is this client's own
// count, or the load the peer last reported (all its clients' work) when that is higher.
// Peak EWMA jumps up to a slow sample at once and decays back over `decayMs`, so a peer that
// turns slow is avoided at once and tried again gradually.

import { PeakEwma } from '../peak-ewma.js'

const DEFAULT_DECAY_MS = 10000 // how fast a peer's latency estimate forgets a slow spell

export function p2c ({ random = Math.random, now = () => performance.now(), decayMs = DEFAULT_DECAY_MS } = {}) {
  const stats = new WeakMap() // PeerEntry -> PeakEwma

  function latency (peer, fallback) {
    return stats.get(peer)?.value ?? fallback
  }

  function cost (peer, fallback) {
    const outstanding = Math.max(peer.calls.size, peer.load ?? 0)
    return latency(peer, fallback) * (1 + outstanding)
  }

  return {
    name: 'p2c',
    select (peers) {
      if (peers.length === 1) return peers[0]
      const i = Math.floor(random() * peers.length)
      let j = Math.floor(random() * (peers.length - 1))
      if (j >= i) j++
      const a = peers[i]
      const b = peers[j]
      // A peer never measured costs what the others do on average, so it gets its share.
      let sum = 0; let n = 0
      for (const p of peers) { const s = stats.get(p); if (s !== undefined) { sum += s.value; n++ } }
      const fallback = n === 0 ? 1 : sum / n
      const ca = cost(a, fallback)
      const cb = cost(b, fallback)
      if (ca === cb) return random() < 0.5 ? a : b
      return ca < cb ? a : b
    },
    onResult (peer, { latencyMs, at }) {
      if (!(latencyMs >= 0)) return
      let s = stats.get(peer)
      if (s === undefined) stats.set(peer, s = new PeakEwma(decayMs))
      s.add(latencyMs, at ?? now())
    },
    /** The current estimate, for tests and stats. */
    latencyOf (peer) {
      return stats.get(peer)?.value ?? null
    },
  }
}
