// The fault scenarios of the whole-system simulation (sim/system.js), shared by
// test/sim/system.test.js (which asserts on them) and bench/cluster/system-sim.js (which reports them).
// Each `fault(sim)` injects its fault, lets simulated time run, and ends it; `seeds`, where
// given, are the seeds the test runs it with (else 1 and 2).

export const P = (i) => `tcp://127.0.0.1:${7001 + i}`

/** A fault: member P(2)'s link has `field` (loss or delay) at `value` for `ms`, then 0 again. */
const degraded = (field, value, ms) => async (s) => {
  s.faulty.add(P(2))
  s.host(P(2))[field] = value
  await s.run(ms)
  s.host(P(2))[field] = 0
}

export const scenarios = [
  {
    name: 'partition p0,p1 from p2,p3,p4 for 5 s, then heal',
    async fault (s) {
      const hosts = (ids) => ids.map((i) => s.host(P(i)).name)
      s.net.partition(hosts([0, 1]), hosts([2, 3, 4]))
      await s.run(5000)
      s.net.heal()
    },
    deathsDuringFault: true, // each side rightly finds the other unreachable; none after the heal
  },
  {
    name: 'one member at 30% loss for 20 s',
    fault: degraded('loss', 0.3, 20000),
  },
  {
    name: 'one member +200 ms RTT for 10 s',
    fault: degraded('delay', 100, 10000),
    noDeathAtAll: true, // slow is not dead
  },
  {
    name: 'one member frozen for 2 s (SIGSTOP, SIGCONT)',
    async fault (s) {
      s.faulty.add(P(2))
      s.host(P(2)).freeze()
      await s.run(2000)
      s.host(P(2)).thaw()
    },
  },
  {
    name: 'a host that vanishes from the network for 5 s and returns',
    async fault (s) {
      s.faulty.add(P(2))
      const h = s.host(P(2)).name
      s.net.partition([h], [...s.net.hosts.keys()].filter((x) => x !== h))
      await s.run(5000)
      s.net.heal()
    },
  },
  {
    name: '10% loss on every link for 20 s',
    // Seed 5: a client's requests to one peer sat behind a message late by retransmissions
    // for 16 s after the loss ended (ejected again at each return), until the in-memory
    // connector ran real heartbeats, which take such a connection down.
    seeds: [1, 2, 5],
    async fault (s) {
      const hosts = [...s.net.hosts.values()]
      for (const h of hosts) h.loss = 0.1
      await s.run(20000)
      for (const h of hosts) h.loss = 0
    },
  },
  {
    name: 'a rolling restart: each peer stopped gracefully and started again, one at a time',
    async fault (s) {
      for (const ep of s.endpoints) {
        const p = s.peers.get(ep)
        s.peers.delete(ep)
        const stopping = p.stop()
        await s.run(1500)
        await stopping
        await s.startPeer(ep)
        await s.run(2000)
      }
    },
  },
]

