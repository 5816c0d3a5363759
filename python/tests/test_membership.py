"""The membership logic (membership.py) on an in-memory network and a virtual clock: no sockets,
no waiting, the same run every time from a seed. Joining, a death seen by everyone with no
false death of the living, Lifeguard's local health, a healed partition converging through
probes of the dead, and a stalled process starting its suspicions over."""
import asyncio
import heapq
import itertools
import random

from zeromesh import codec
from zeromesh.constants import MessageType
from zeromesh.membership import Member, Membership, MembershipConfig

INTERVAL = MembershipConfig().probe_interval


class VirtualClock:
    """Monotonic and wall time that move only when advance() says; timers and sleeps run in order."""

    def __init__(self):
        self.t = 0.0
        self.timers = []
        self.seq = itertools.count()

    def now(self):
        return self.t

    def wall(self):
        return 1_700_000_000_000 + int(self.t)

    def call_later(self, ms, fn):
        timer = Timer(fn)
        heapq.heappush(self.timers, (self.t + ms, next(self.seq), timer.fire))
        return timer

    async def sleep(self, ms):
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self.timers, (self.t + ms, next(self.seq), lambda: fut.done() or fut.set_result(None)))
        await fut

    async def advance(self, ms):
        end = self.t + ms
        await settle()  # what was started since runs up to its first wait before time moves
        while self.timers and self.timers[0][0] <= end:
            at, _, fire = heapq.heappop(self.timers)
            self.t = at
            fire()
            await settle()
        self.t = end
        await settle()


class Timer:
    def __init__(self, fn):
        self.fn, self.cancelled = fn, False

    def cancel(self):
        self.cancelled = True

    def fire(self):
        if not self.cancelled:
            self.fn()


async def settle():
    for _ in range(20):
        await asyncio.sleep(0)


class Network:
    """Members by endpoint; a link is cut by dropping what crosses it in either direction."""

    def __init__(self, clock):
        self.clock = clock
        self.members = {}
        self.cut = set()  # frozenset({a, b})
        self.seqs = itertools.count(1)

    def down(self, a, b):
        return frozenset((a, b)) in self.cut or a not in self.members or b not in self.members

    def asker(self, me):
        async def ask(ep, make, timeout):
            msg = codec.decode(make(next(self.seqs)))
            target = self.members.get(ep)
            if target is None or self.down(me, ep) or getattr(target, "frozen", False):
                await self.clock.sleep(timeout)
                return None
            t, g = msg["type"], msg["gossip"]
            if t == MessageType.PROBE:
                answer = target.on_probe(msg["seq"], g)
            elif t == MessageType.PROBE_REQ:
                answer = await target.on_probe_req(msg["seq"], g)
            else:
                answer = target.on_sync(msg["seq"], g)
            return codec.decode(answer)
        return ask

    def add(self, ep, seeds, seed=1):
        m = Membership(endpoint=ep, seeds=seeds, ask=self.asker(ep), clock=self.clock, rng=random.Random(seed))
        self.members[ep] = m
        m.task = asyncio.ensure_future(m.run())
        return m

    async def close(self):
        for m in self.members.values():
            m.leaving = True
            m.task.cancel()
            for t in m.tasks:
                t.cancel()
        await settle()


def states(m):
    return {x["endpoint"]: x["state"] for x in m.members()}


def run(test):
    asyncio.run(test())


def world(n):
    clock = VirtualClock()
    net = Network(clock)
    eps = [f"tcp://10.0.0.{i + 1}:5555" for i in range(n)]
    for i, ep in enumerate(eps):
        net.add(ep, [eps[0]] if i else [], seed=i + 1)
    return clock, net, eps


def test_members_join_through_a_seed_and_a_death_is_seen_by_all_with_no_false_death():
    async def main():
        clock, net, eps = world(5)
        await clock.advance(3000)
        for ep in eps:
            assert set(states(net.members[ep]).values()) == {"alive"} and len(states(net.members[ep])) == 5
        gone = net.members.pop(eps[4])  # its process is gone: nothing it is asked is answered
        gone.task.cancel()
        await clock.advance(10000)
        for ep in eps[:4]:
            s = states(net.members[ep])
            assert s[eps[4]] == "dead", s
            assert [s[e] for e in eps[:4]] == ["alive"] * 4, s
            assert net.members[ep].counts["died"] == 1
        await net.close()
    run(main)


def test_a_peer_whose_own_link_is_bad_raises_its_local_health_and_waits_longer():
    async def main():
        clock, net, eps = world(5)
        await clock.advance(3000)
        me = net.members[eps[0]]
        assert me.health == 0
        for ep in eps[1:]:
            net.cut.add(frozenset((eps[0], ep)))  # every probe it sends and every help it asks fails
        await clock.advance(2000)
        assert me.health >= 3, me.health
        # Its suspicions last (score + 1) times as long as a healthy peer's: it declares nobody
        # dead in the time a healthy peer would.
        healthy = MembershipConfig().suspicion_mult * INTERVAL  # suspicion_mult x interval, for fewer than 10 members
        assert me.scaled(healthy) >= 4 * healthy
        net.cut.clear()
        await clock.advance(20000)
        assert me.health == 0  # answered probes bring it back
        assert set(states(me).values()) == {"alive"}
        await net.close()
    run(main)


def test_a_healed_partition_converges_within_seconds_through_probes_of_the_dead():
    async def main():
        clock, net, eps = world(4)
        await clock.advance(3000)
        left, right = eps[:2], eps[2:]
        for a in left:
            for b in right:
                net.cut.add(frozenset((a, b)))
        await clock.advance(15000)
        assert states(net.members[left[0]])[right[0]] == "dead"
        assert states(net.members[right[0]])[left[0]] == "dead"
        net.cut.clear()
        # Push-pull alone (every 5 s, one in four to the dead) would take many seconds; a dead
        # member is probed every 4 rounds (1 s).
        await clock.advance(3000)
        for ep in eps:
            assert set(states(net.members[ep]).values()) == {"alive"}, (ep, states(net.members[ep]))
        assert sum(m.counts["dead_probes"] for m in net.members.values()) > 0
        await net.close()
    run(main)


def test_a_stalled_process_starts_its_suspicions_over_instead_of_declaring_deaths():
    async def main():
        clock, net, eps = world(3)
        await clock.advance(3000)
        me = net.members[eps[0]]
        other = me.table[eps[1]]
        me.suspect(other)  # suspected on its own word...
        me.last_round = clock.now() - 10 * INTERVAL  # ...and then no probe round ran for ten intervals
        me.suspicion_over(other, other.incarnation)  # the suspicion runs out while it was stalled
        assert other.state != 2  # not dead
        assert me.counts["stalls"] == 1 and me.health >= 1
        assert other.suspicion is not None  # it starts over
        await clock.advance(5000)
        assert states(me)[eps[1]] == "alive"  # the member answered and refuted meanwhile
        await net.close()
    run(main)


def test_a_forged_list_of_a_thousand_members_admits_none_and_holds_at_most_64_candidates():
    """Rule 5 against a flood: a SYNC anyone could send, naming 1,000 members nobody can reach,
    makes candidates (capped at 64, each probed and forgotten when it never answers); none is
    counted, listed or gossiped, and the real members stay as they were."""
    async def main():
        clock, net, eps = world(3)
        await clock.advance(3000)
        me = net.members[eps[0]]
        forged = [{"endpoint": f"tcp://10.9.{i // 250}.{i % 250 + 1}:5555", "incarnation": clock.wall(), "state": 0, "meta": {}} for i in range(1000)]
        me.on_sync(1, {"type": "sync", "from": forged[0]["endpoint"], "members": forged})
        assert len(me.candidates) == 64
        assert sorted(states(me)) == sorted(eps)
        await clock.advance(10000)
        assert me.candidates == {}
        assert sorted(states(me)) == sorted(eps) and set(states(me).values()) == {"alive"}
        assert all(sorted(states(net.members[ep])) == sorted(eps) for ep in eps)
        await net.close()
    run(main)


def test_a_suspicion_that_runs_out_asks_a_live_member_first_who_answers_with_the_refutation_it_heard():
    # The Node peer's rule (PROTOCOL.md 4.6): after a healed partition, a member's refutation
    # reached one peer after its suspicion ran out, and it was declared dead.
    async def main():
        clock, net, eps = world(3)
        await clock.advance(3000)
        me, other, third = net.members[eps[0]], eps[1], net.members[eps[2]]
        net.cut.add(frozenset((eps[0], other)))  # this peer cannot hear the member itself
        held = me.table[other]
        me.suspect(held)
        doubted = held.incarnation
        third.table[other].incarnation = doubted + 1  # the member refuted, and the third heard it
        # A probe that doubts it is answered with the refutation...
        answer = codec.decode(third.on_probe(1, {"type": "probe", "from": eps[0], "target": eps[2], "updates": [held.claim()]}))
        assert {"endpoint": other, "incarnation": doubted + 1, "state": 0} in [{k: u[k] for k in ("endpoint", "incarnation", "state")} for u in answer["gossip"]["updates"]]
        # ...and the suspicion, when it runs out, asks the third first: the member lives.
        held.suspicion.cancel()
        me.suspicion_over(held, doubted)
        await clock.advance(1000)
        assert states(me)[other] == "alive" and me.table[other].incarnation == doubted + 1
        assert me.counts["died"] == 0
        await net.close()
    run(main)


def test_a_probe_doubting_many_members_gets_at_most_a_messages_worth_of_corrections():
    async def main():
        clock, net, eps = world(1)
        me = net.members[eps[0]]
        others = [f"tcp://10.0.1.{i + 1}:5555" for i in range(20)]
        for ep in others:
            me.table[ep] = Member(ep, 5, 0, {})
        doubts = [{"endpoint": ep, "incarnation": 4, "state": 1, "meta": {}} for ep in others]
        answer = codec.decode(me.on_probe(1, {"type": "probe", "from": "tcp://10.0.0.66:5555", "target": eps[0], "updates": doubts}))
        corrections = [u for u in answer["gossip"]["updates"] if u["endpoint"] in others and u["incarnation"] == 5 and u["state"] == 0]
        assert len(corrections) == MembershipConfig().max_piggyback
        await net.close()
    run(main)
