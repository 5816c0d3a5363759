// Membership defaults, one per line with the reason. The reference is memberlist's LAN
// config (probe 1 s, timeout 500 ms, 3 indirect checks, suspicion multiplier 4); zeromesh
// peers live on one LAN or one host, where a round trip is well under a millisecond, so
// everything is about 4x faster.
import { checkOptions, int } from '../../runtime/options.js'

export const membershipDefaults = Object.freeze({
  probeInterval: 250, //      one member probed per interval: detection in ~e/(e-1) intervals
  probeTimeout: 200, //       a LAN round trip is <1 ms; this leaves room for GC, busy loops and a slow link (the direct retry waits 2x: RTT up to 400 ms)
  indirectChecks: 3, //       peers asked to probe for us when a direct probe fails
  gossipInterval: 100, //     while changes wait to be sent, they are also pushed this often...
  gossipNodes: 3, //          ...to this many random subjects (memberlist: 200 ms, 3 nodes), so a refutation outruns the suspicion timeout
  suspicionMult: 6, //        suspicion lasts at least 6 probe intervals x log10(N) (1.5 s for N < 10; memberlist's 4 x 1 s is slower still)...
  suspicionMaxMult: 4, //     ...and at most 4x that, shortened by independent confirmations
  retransmitMult: 4, //       each change is piggybacked 4 x ceil(log10(N+1)) times
  maxPiggyback: 16, //        changes per message at most: message size bounded whatever N is
  pushPullInterval: 5000, //  full state exchange with a random member, for anti-entropy
  pushPullClaims: 128, //     claims a periodic push-pull carries each way at most: the whole list up to 128 members, a random sample past it (a join's lists stay whole), so its bytes stop growing with N
  syncTimeout: 1000, //       wait for a push-pull answer (a full member list)
  joinRetryMin: 100, //       first pause before retrying unreachable seeds...
  joinRetryMax: 5000, //      ...doubling up to this, with jitter
  leaveTimeout: 300, //       how long stop() waits for members to acknowledge the leave
  maxCandidates: 64, //       members heard of second-hand and not yet verified by a probe, at most...
  candidateTimeout: 5000, //  ...each for this long: a flood of made-up endpoints costs bounded probing
  monitors: 8, //             members each peer probes, and that probe it, once it has more than 2 x this others (overlay.js); below, all (SWIM)
  maxConnections: 32, //      membership connections held open at most; the subjects' are kept, others closed least recently used first...
  connectionIdleMs: 10000, // ...or when unused this long (a verification's, an indirect probe's)
  maxSyncsPerSecond: 20, //   push-pulls answered a second, with a burst of twice that; past it a NACK (a seed is not crushed by a cold start)
  awarenessMax: 8, //         Lifeguard local health: timeouts and the probe interval scale up to 9x on a peer whose own link is bad
  reapAfter: 30000, //        dead and left members are forgotten after this (memberlist: 30 s)...
  reconnectTimeout: 86400000, // ...but one that died is still tried by push-pull for this long (Serf: 24 h), so a long partition heals
})

export function resolveMembershipOptions (given) {
  const d = membershipDefaults
  return checkOptions('membership options', given, {
    probeInterval: int(d.probeInterval, 10, 600000),
    probeTimeout: int(d.probeTimeout, 1, 600000),
    indirectChecks: int(d.indirectChecks, 0, 16),
    gossipInterval: int(d.gossipInterval, 0, 600000),
    gossipNodes: int(d.gossipNodes, 0, 64),
    suspicionMult: int(d.suspicionMult, 1, 100),
    suspicionMaxMult: int(d.suspicionMaxMult, 1, 100),
    retransmitMult: int(d.retransmitMult, 1, 100),
    maxPiggyback: int(d.maxPiggyback, 1, 1024),
    pushPullInterval: int(d.pushPullInterval, 0, 3600000),
    pushPullClaims: int(d.pushPullClaims, 1, 65535),
    syncTimeout: int(d.syncTimeout, 1, 600000),
    joinRetryMin: int(d.joinRetryMin, 1, 600000),
    joinRetryMax: int(d.joinRetryMax, 1, 3600000),
    leaveTimeout: int(d.leaveTimeout, 0, 600000),
    maxCandidates: int(d.maxCandidates, 1, 65535),
    candidateTimeout: int(d.candidateTimeout, 1, 600000),
    monitors: int(d.monitors, 1, 64),
    maxConnections: int(d.maxConnections, 1, 65535),
    connectionIdleMs: int(d.connectionIdleMs, 0, 86400000),
    maxSyncsPerSecond: int(d.maxSyncsPerSecond, 1, 100000),
    awarenessMax: int(d.awarenessMax, 0, 64),
    reapAfter: int(d.reapAfter, 1, 86400000),
    reconnectTimeout: int(d.reconnectTimeout, 0, 30 * 86400000),
  })
}
