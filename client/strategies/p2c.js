// Power of two choices over a latency-weighted load (the Finagle/Linkerd "peak EWMA"
// balancer): pick two healthy peers at random, send to the one with the lower cost, where
// cost = peak-EWMA latency x (1 + requests outstanding). Outstanding is this client's own
// count, or the load the peer last reported (all its clients' work) when that is higher.
// The estimate is the peer's own (PeerEntry.latency, client/peak-ewma.js): it jumps to a slow
// sample at once and decays as it is read, so a peer that turned slow is avoided at once and
// tried again as its estimate fades. A peer with nothing in flight and no recent sample costs
// nothing: it is tried at the next chance, and that answer says what it is like now.
//
// Ties: two costs within TIE_SHARE of the lower one, or within TIE_MS, are a tie, broken at
// random. Peers that are alike never measure exactly alike (a steady 10% apart on one host is
// common), and with serial or light traffic, where outstanding is 0, always taking the lower
// estimate sends nearly everything to one of them (395 of 400 requests of two peers, measured).
// A peer really slower (+2 ms on a 0.2 ms round trip) is far outside a tie.

const TIE_SHARE = 0.2 // costs this close (relative to the lower) are a tie...
const TIE_MS = 0.2 //    ...or this close in ms, for round trips of a few hundred microseconds

export function p2c ({ random = Math.random, now = () => performance.now() } = {}) {
  function cost (peer, t, fallback) {
    const outstanding = Math.max(peer.calls.size, peer.load ?? 0)
    const est = peer.latency
    if (peer.calls.size === 0 && est.stale(t)) return 0
    return (est.read(t) ?? fallback) * (1 + outstanding)
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
      const t = now()
      // A peer never measured but busy costs what the two measured ones do on average.
      const la = a.latency.read(t)
      const lb = b.latency.read(t)
      const fallback = la === null ? (lb ?? 1) : lb === null ? la : (la + lb) / 2
      const ca = cost(a, t, fallback)
      const cb = cost(b, t, fallback)
      const lo = ca < cb ? ca : cb
      if (Math.abs(ca - cb) <= Math.max(TIE_SHARE * lo, TIE_MS)) return random() < 0.5 ? a : b
      return ca < cb ? a : b
    },
  }
}
