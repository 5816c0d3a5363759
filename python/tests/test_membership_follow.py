"""What PROTOCOL.md 4.6 asks since the Node peer's last membership change (peer/membership/swim.js,
vector gossip-6), on one Membership with a clock that moves only when told and an `ask` that
answers as the test says: no sockets, no Node. A SYNC answered with NACK past 20 a second (a
burst of 40), local health raised by a probe round whose timer fired late, and samples of 128
claims for live members' anti-entropy (a join's lists stay whole)."""
import asyncio
import json
import random
from pathlib import Path

from zeromesh import codec
from zeromesh.constants import MemberState, MessageType
from zeromesh.membership import Membership, MembershipConfig

ME = "tcp://127.0.0.1:5002"
CONFIG = MembershipConfig()
VECTORS = {v["id"]: v for v in json.loads((Path(__file__).resolve().parents[2] / "protocol" / "vectors.json").read_text())["vectors"]}


class StillClock:
    """Monotonic and wall time that move only when the test (or a sleep) moves them."""

    def __init__(self):
        self.t = 0.0

    def now(self):
        return self.t

    def wall(self):
        return 1_700_000_000_000 + int(self.t)

    def call_later(self, ms, fn):
        return Handle()

    async def sleep(self, ms):
        self.t += ms
        await asyncio.sleep(0)


class Handle:
    def cancel(self):
        pass


class Asker:
    """Records what it is sent (decoded); answers with what `answer(msg)` gives, None by default."""

    def __init__(self, answer=None):
        self.sent = []
        self.answer = answer or (lambda msg: None)

    async def __call__(self, ep, make, timeout):
        msg = codec.decode(make(len(self.sent) + 1))
        self.sent.append((ep, msg))
        out = self.answer(msg)
        return codec.decode(out) if out is not None else None


def member(i, clock):
    return {"endpoint": f"tcp://10.0.{i // 250}.{i % 250 + 1}:5555", "incarnation": clock.wall(), "state": MemberState.ALIVE, "meta": {}}


def peer(n_others=0, seeds=(), config=None, ask=None):
    """A Membership holding `n_others` live members besides itself (taken in from an answer)."""
    clock = StillClock()
    m = Membership(endpoint=ME, seeds=list(seeds), ask=ask or Asker(), clock=clock, rng=random.Random(7), config=config)
    others = [member(i, clock) for i in range(n_others)]
    if others:
        m.merge(others, others[0]["endpoint"], True)
    assert len(m.table) == n_others + 1
    return m, clock, others


def sync(seq, sender, members):
    return {"type": "sync", "from": sender, "members": members}


def answer_of(m, seq, msg):
    return codec.decode(m.on_sync(seq, msg))


def run(test):
    asyncio.run(test())


def test_the_new_defaults_are_the_node_peers():
    assert (CONFIG.suspicion_mult, CONFIG.push_pull_claims, CONFIG.max_syncs_per_second) == (6, 128, 20)


# A SYNC answered with NACK past the rate.

def test_a_peer_answers_40_quick_syncs_then_nack_with_the_syncs_seq_until_its_bucket_refills():
    async def main():
        m, clock, _ = peer()
        stranger = "tcp://10.9.0.1:5555"
        for seq in range(1, 41):  # the burst: twice the rate, all at the same instant
            a = answer_of(m, seq, sync(seq, stranger, [member(0, clock)]))
            assert a["seq"] == seq and a["gossip"]["type"] == "sync", seq
        refused = m.on_sync(12, sync(12, stranger, [member(1, clock)]))
        got = codec.decode(refused)
        assert (got["type"], got["seq"], got["gossip"]) == (MessageType.NACK, 12, {"type": "nack", "from": ME})
        assert refused.hex() == VECTORS["gossip-6"]["hex"].replace(" ", "")  # vector gossip-6, byte for byte
        assert m.counts["syncs"] == 40 and m.counts["syncs_refused"] == 1
        assert member(1, clock)["endpoint"] not in m.candidates  # a refused SYNC is not taken in
        clock.t += 49  # 20 a second: one more answer 50 ms on, not before
        assert answer_of(m, 13, sync(13, stranger, []))["gossip"]["type"] == "nack"
        clock.t += 1
        assert answer_of(m, 14, sync(14, stranger, []))["gossip"]["type"] == "sync"
        assert answer_of(m, 15, sync(15, stranger, []))["gossip"]["type"] == "nack"
        clock.t += 10_000  # a long quiet time refills the bucket to its burst, no more
        answered = [answer_of(m, s, sync(s, stranger, []))["gossip"]["type"] for s in range(100, 145)]
        assert answered == ["sync"] * 40 + ["nack"] * 5
        for t in m.tasks:
            t.cancel()
    run(main)


def test_the_rate_is_a_config_field():
    async def main():
        m, _, _ = peer(config=MembershipConfig(max_syncs_per_second=5))
        answered = [answer_of(m, s, sync(s, "tcp://10.9.0.1:5555", []))["gossip"]["type"] for s in range(1, 13)]
        assert answered == ["sync"] * 10 + ["nack"] * 2
    run(main)


def test_a_sender_takes_nack_as_no_answer_and_a_join_tries_again_after_its_backoff():
    async def main():
        seed = "tcp://10.0.0.1:5555"
        said = {"n": 0}

        def seed_answers(msg):
            said["n"] += 1
            if said["n"] <= 2:
                return codec.encode_gossip(msg["seq"], {"type": "nack", "from": seed})
            return codec.encode_gossip(msg["seq"], {"type": "sync", "from": seed, "members": [member(0, m.clock)]})

        ask = Asker(seed_answers)
        m, clock, _ = peer(seeds=[seed], ask=ask)
        assert not m.joined
        assert await m.sync_with(seed) is False  # NACK: no answer, nothing taken in
        assert list(m.table) == [ME]
        await m.join()  # one more NACK, a pause, then the seed answers
        assert m.joined and said["n"] == 3 and clock.t >= CONFIG.join_retry_min * 0.5
        assert seed in m.table and m.table[seed].state == MemberState.ALIVE
    run(main)


# Local health raised by a late round.

def test_a_probe_round_whose_timer_fired_over_half_a_probe_timeout_late_raises_local_health():
    async def main():
        m, clock, _ = peer()
        m.last_round = clock.t
        clock.t += CONFIG.probe_interval + CONFIG.probe_timeout / 2  # late by exactly half: on time
        m.probe_round()
        assert (m.health, m.counts["late_rounds"]) == (0, 0)
        clock.t += CONFIG.probe_interval + CONFIG.probe_timeout / 2 + 1  # later than that
        m.probe_round()
        assert (m.health, m.counts["late_rounds"], m.counts["stalls"]) == (1, 1, 0)
        clock.t += CONFIG.probe_interval + CONFIG.probe_timeout  # again
        m.probe_round()
        assert (m.health, m.counts["late_rounds"]) == (2, 2)
        clock.t += 3 * CONFIG.probe_interval + 1  # a stall counts as one, not as a late round too
        m.probe_round()
        assert (m.health, m.counts["late_rounds"], m.counts["stalls"]) == (3, 2, 1)
        clock.t += CONFIG.probe_interval  # on time: nothing
        m.probe_round()
        assert (m.health, m.counts["late_rounds"], m.counts["stalls"]) == (3, 2, 1)
        m.health = CONFIG.awareness_max
        clock.t += 2 * CONFIG.probe_interval
        m.probe_round()
        assert m.health == CONFIG.awareness_max and m.counts["late_rounds"] == 3  # counted, capped
    run(main)


# Samples for live members' anti-entropy.

def check_sample(m, members, n=CONFIG.push_pull_claims):
    eps = [c["endpoint"] for c in members]
    assert len(eps) == n + 1 and eps[0] == ME and len(set(eps)) == len(eps)
    assert all(ep in m.table for ep in eps)


def test_a_sync_from_a_live_member_carrying_2_to_129_claims_gets_a_sample_of_128_past_129_members():
    async def main():
        m, clock, others = peer(n_others=200)
        sender = others[5]["endpoint"]
        for size in (2, 64, 129):
            check_sample(m, answer_of(m, size, sync(size, sender, others[5:5 + size]))["gossip"]["members"])
        # The whole list otherwise: more than 129 claims, the sender's claim alone (a restarted
        # member), a sender not held (a joiner) and one not held alive.
        whole = len(m.table)
        assert len(answer_of(m, 1, sync(1, sender, others[5:135]))["gossip"]["members"]) == whole
        assert len(answer_of(m, 2, sync(2, sender, others[5:6]))["gossip"]["members"]) == whole
        stranger = member(999, clock)
        assert len(answer_of(m, 3, sync(3, stranger["endpoint"], [stranger, others[0]]))["gossip"]["members"]) == whole
        m.suspect(m.table[sender])
        assert len(answer_of(m, 4, sync(4, sender, others[5:10]))["gossip"]["members"]) == whole
        for t in m.tasks:
            t.cancel()
    run(main)


def test_up_to_129_members_a_sample_is_the_whole_list():
    async def main():
        m, _, others = peer(n_others=128)
        got = answer_of(m, 1, sync(1, others[3]["endpoint"], others[3:10]))["gossip"]["members"]
        assert len(got) == 129 and got == m.claims()
    run(main)


def test_its_own_push_pull_with_a_live_member_sends_a_sample_and_a_join_the_whole_list():
    async def main():
        ask = Asker()
        m, _, others = peer(n_others=200, seeds=["tcp://10.0.0.1:5555"], ask=ask)
        await m.push_pull()
        ep, sent = ask.sent[-1]
        assert ep in m.table and sent["gossip"]["type"] == "sync"
        check_sample(m, sent["gossip"]["members"])
        await m.sync_with(others[0]["endpoint"])  # a join, a seed, a member held dead: whole
        assert len(ask.sent[-1][1]["gossip"]["members"]) == len(m.table) == 201
    run(main)


# A leave heard second-hand (rule 3): a suspicion that, unrefuted, ends in left.

class TimerClock(StillClock):
    """A StillClock whose timers fire when the test moves time on with advance()."""

    def __init__(self):
        super().__init__()
        self.timers = []

    def call_later(self, ms, fn):
        h = TimerHandle(self.t + ms, fn)
        self.timers.append(h)
        return h

    def advance(self, ms):
        end = self.t + ms
        while True:
            due = sorted((h for h in self.timers if not h.cancelled and h.at <= end), key=lambda h: h.at)
            if not due:
                break
            h = due[0]
            self.timers.remove(h)
            self.t = max(self.t, h.at)
            h.fn()
        self.t = end


class TimerHandle:
    def __init__(self, at, fn):
        self.at, self.fn, self.cancelled = at, fn, False

    def cancel(self):
        self.cancelled = True


def leaving_peer():
    """A peer holding two live members: `gone`, said to have left, and `relay`, who says so."""
    clock = TimerClock()
    m = Membership(endpoint=ME, seeds=[], ask=Asker(), clock=clock, rng=random.Random(7))
    gone, relay = member(0, clock), member(1, clock)
    m.merge([gone, relay], gone["endpoint"], True)
    m.last_round = clock.t
    return m, clock, gone, relay


def left_of(claim):
    return {**claim, "state": MemberState.LEFT}


def run_rounds(m, clock, ms):
    """Time moves on `ms` with a probe round each interval (so no stall is seen); no probe answers."""
    for _ in range(int(ms // CONFIG.probe_interval) + 1):
        clock.advance(CONFIG.probe_interval)
        m.last_round = clock.t
    for t in m.tasks:
        t.cancel()


def test_a_relayed_left_about_a_live_member_is_a_suspicion_relayed_as_left_that_ends_in_left():
    async def main():
        m, clock, gone, relay = leaving_peer()
        ep = gone["endpoint"]
        m.on_probe(1, {"type": "probe", "from": relay["endpoint"], "target": ME, "updates": [left_of(gone)]})
        held = m.table[ep]
        assert (held.state, held.incarnation, held.leaving, held.by) == (MemberState.SUSPECT, gone["incarnation"], True, relay["endpoint"])
        assert m.counts["suspected"] == 1
        # Passed on as the left claim it came as: gossip and a SYNC's list alike, no `by`.
        said = {"endpoint": ep, "incarnation": gone["incarnation"], "state": MemberState.LEFT, "meta": {}}
        assert [c for c in m.piggyback() if c["endpoint"] == ep] == [said]
        assert [c for c in m.claims() if c["endpoint"] == ep] == [said]
        # Nobody refutes: when the suspicion runs out it has left, and no one died.
        run_rounds(m, clock, CONFIG.suspicion_mult * CONFIG.probe_interval)
        assert m.table[ep].state == MemberState.LEFT and m.table[ep].incarnation == gone["incarnation"]
        assert (m.counts["died"], m.counts["left_relayed"]) == (0, 1)
        assert m.members()[[x["endpoint"] for x in m.members()].index(ep)]["state"] == "left"
    run(main)


def test_a_relayed_left_refuted_before_its_suspicion_runs_out_keeps_the_member_alive():
    async def main():
        m, clock, gone, relay = leaving_peer()
        ep = gone["endpoint"]
        m.merge([left_of(gone)], relay["endpoint"], False)
        assert m.table[ep].state == MemberState.SUSPECT and m.table[ep].leaving
        clock.advance(CONFIG.probe_interval)
        m.last_round = clock.t
        m.merge([{**gone, "incarnation": gone["incarnation"] + 1}], ep, True)  # the member refutes
        held = m.table[ep]
        assert (held.state, held.incarnation, held.leaving) == (MemberState.ALIVE, gone["incarnation"] + 1, False)
        run_rounds(m, clock, 2 * CONFIG.suspicion_mult * CONFIG.probe_interval)
        assert m.table[ep].state == MemberState.ALIVE
        assert (m.counts["died"], m.counts["left_relayed"]) == (0, 0)
    run(main)


def test_a_relayed_left_about_a_member_suspected_at_its_incarnation_makes_the_suspicion_a_leave():
    async def main():
        m, clock, gone, relay = leaving_peer()
        ep = gone["endpoint"]
        m.suspect(m.table[ep])  # its own probes went unanswered: a suspicion that would end in dead
        assert m.table[ep].state == MemberState.SUSPECT and not m.table[ep].leaving
        m.merge([left_of(gone)], "tcp://10.9.9.9:5555", False)  # a stranger's word changes nothing
        assert not m.table[ep].leaving
        m.merge([left_of(gone)], relay["endpoint"], False)
        assert m.table[ep].leaving and m.table[ep].claim()["state"] == MemberState.LEFT
        run_rounds(m, clock, CONFIG.suspicion_mult * CONFIG.probe_interval)
        assert m.table[ep].state == MemberState.LEFT
        assert (m.counts["died"], m.counts["left_relayed"]) == (0, 1)
    run(main)


def test_a_suspicion_not_a_leave_still_ends_in_dead_and_the_members_own_left_is_a_leave_at_once():
    async def main():
        m, clock, gone, relay = leaving_peer()
        m.merge([{**gone, "state": MemberState.DEAD}], relay["endpoint"], False)  # a relayed death
        assert m.table[gone["endpoint"]].state == MemberState.SUSPECT and not m.table[gone["endpoint"]].leaving
        m.merge([left_of(relay)], relay["endpoint"], False)  # its own word
        assert m.table[relay["endpoint"]].state == MemberState.LEFT
        run_rounds(m, clock, CONFIG.suspicion_mult * CONFIG.probe_interval)
        assert m.table[gone["endpoint"]].state == MemberState.DEAD
        assert (m.counts["died"], m.counts["left_relayed"]) == (1, 0)
    run(main)
