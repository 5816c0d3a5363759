"""A member that left answers, while its peer drains, with its own LEFT claim only (the Node
peer's leftAnswer, peer/membership/swim.js; issue 73): a probe gets an ACK of that claim, a
SYNC a SYNC of that claim (even past the SYNC rate), a PROBE_REQ a NACK without probing
anyone for the asker, and what they carry is not taken in. So a member that did not hear the
leave (it went straight to a few) and probes it learns it from the member itself and declares
no death; and the leaver gossips nothing it heard after it left."""
import asyncio

from test_membership_follow import ME, Asker, member, peer
from zeromesh import codec
from zeromesh.constants import MemberState


def left_peer():
    asker = Asker(lambda msg: None)  # nobody answers the leave: it reached nobody
    m, clock, others = peer(3, ask=asker)
    asyncio.run(m.leave())
    asker.sent.clear()
    return m, clock, others, asker


def own_left_claim(m):
    return [{"endpoint": ME, "incarnation": m.self.incarnation, "state": MemberState.LEFT, "meta": {}}]


def claims(updates):
    return [{k: c[k] for k in ("endpoint", "incarnation", "state", "meta")} for c in updates]


def test_a_probe_after_the_leave_is_acked_with_the_left_claim_alone():
    m, clock, others, _ = left_peer()
    stranger = member(99, clock)
    ack = codec.decode(m.on_probe(5, {"type": "probe", "from": others[0]["endpoint"], "target": ME, "updates": [stranger]}))["gossip"]
    assert ack["type"] == "ack" and ack["from"] == ME
    assert claims(ack["updates"]) == own_left_claim(m)
    assert stranger["endpoint"] not in m.table and stranger["endpoint"] not in m.candidates  # taken in: nothing


def test_a_sync_after_the_leave_gets_the_left_claim_alone_even_past_the_rate():
    m, clock, others, _ = left_peer()
    m.sync_tokens = 0.0  # the SYNC rate spent: a live member would answer NACK
    ans = codec.decode(m.on_sync(6, {"type": "sync", "from": others[1]["endpoint"], "members": [others[1]]}))["gossip"]
    assert ans["type"] == "sync" and claims(ans["members"]) == own_left_claim(m)


def test_a_probe_request_after_the_leave_is_nacked_without_probing():
    m, clock, others, asker = left_peer()
    ans = codec.decode(asyncio.run(m.on_probe_req(7, {"type": "probe-req", "from": others[0]["endpoint"], "target": others[2]["endpoint"], "updates": []})))["gossip"]
    assert ans["type"] == "nack"
    assert asker.sent == []


def test_a_member_that_missed_the_leave_learns_it_from_the_member():
    """Two Memberships: B never heard A's leave; B's probe of A is answered with A's left claim, so B holds A left, not suspect and then dead."""
    a, clock, _ = peer(0)
    b_asks = []

    async def b_ask(ep, make, timeout):
        msg = codec.decode(make(1))
        b_asks.append(msg)
        return codec.decode(a.on_probe(msg["seq"], msg["gossip"]))

    from zeromesh.membership import Membership
    import random
    b = Membership(endpoint="tcp://127.0.0.1:5003", seeds=[], ask=b_ask, clock=clock, rng=random.Random(1))
    b.merge([a.self.claim()], ME, True)
    assert b.table[ME].state == MemberState.ALIVE
    asyncio.run(a.leave())
    asyncio.run(b.probe(b.table[ME]))
    assert b.table[ME].state == MemberState.LEFT
