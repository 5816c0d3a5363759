"""Membership by gossip (PROTOCOL.md 4.6), SWIM as the Node peer runs it
(peer/membership/swim.js): probe one member per interval, ask others to probe it when it does
not answer, suspect it, declare it dead when the suspicion is not refuted in time; changes
ride on probes; a periodic SYNC with a random member for anti-entropy and to join. The rules
every receiver applies to a claim (horizon, only alive introduces, left is the member's own
word, dead is a suspicion, trust before use, reaping) are applied before the merge rule.

No sockets and no clocks of its own: `ask(endpoint, make_frame, timeout_ms)` sends a request
and resolves with the decoded answer (or None), `clock` gives monotonic and wall time in ms.
Beside SWIM, what PROTOCOL.md 4.6 asks of every implementation, as the Node peer does it:
Lifeguard's local health (a peer whose own probes fail, whose rounds run late, or who must
refute, waits longer before it suspects or declares dead), probes of members held dead (a healed
partition converges in seconds), stall detection (a peer that was paused starts its suspicions
over), SYNCs answered at a bounded rate (NACK past it), samples for live members' anti-entropy,
and a leave heard second-hand read as a suspicion that, unrefuted, ends in left (not dead),
relayed as the left claim it came as."""
from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from . import codec
from .constants import INCARNATION_HORIZON_MS, MemberState
from .service import fnv1a


@dataclass(frozen=True)
class MembershipConfig:
    """The Node peer's defaults (peer/membership/config.js), each for the same reason."""

    probe_interval: int = 250  #     one member probed per interval
    probe_timeout: int = 200  #      a LAN round trip is well under 1 ms: room for GC and a slow link
    indirect_checks: int = 3  #      members asked to probe for us when a direct probe fails
    suspicion_mult: int = 6  #       suspicion lasts 6 probe intervals x log10(N) at least (1.5 s for N < 10)
    retransmit_mult: int = 4  #      each change piggybacked 4 x ceil(log10(N+1)) times
    max_piggyback: int = 16  #       claims per message at most
    push_pull_interval: int = 5000  # full state exchange with a random member
    push_pull_claims: int = 128  #   claims a periodic push-pull with a live member carries at most: a random sample past it (a join's lists stay whole)
    sync_timeout: int = 1000  #      wait for a SYNC answer
    join_retry_min: int = 100  #     first pause before retrying unreachable seeds, doubling...
    join_retry_max: int = 5000  #    ...up to this
    leave_timeout: int = 300  #      how long a leave waits for acknowledgements
    max_candidates: int = 64  #      members heard of second-hand, not yet verified, at most...
    candidate_timeout: int = 5000  # ...each for this long
    reap_after: int = 30000  #       dead and left members are forgotten after this
    max_syncs_per_second: int = 20  # SYNCs answered a second, a burst of twice that; past it a NACK (a seed is not crushed by a cold start)
    awareness_max: int = 8  #        Lifeguard's local health: timeouts and the probe interval scale up to 9x


STALL_ROUNDS = 3  #          no probe round for this many intervals: this process was stalled
DEAD_PROBE_ROUNDS = 4  #     a member held dead is probed every this many rounds
DEAD_SYNC_CHANCE = 0.25  #   share of push-pulls sent to a member held dead
LAST_CALL = 2  #             live members asked whether they heard a refutation before a suspicion ends in a death
MAX_RECONNECT = 256  #       members reaped while dead still tried, at most...
RECONNECT_MS = 86_400_000  # ...for this long


STRENGTH = {MemberState.ALIVE: 0, MemberState.SUSPECT: 1, MemberState.DEAD: 2, MemberState.LEFT: 3}


@dataclass
class Member:
    endpoint: str
    incarnation: int
    state: int
    meta: dict
    by: str | None = None
    service: int | None = None
    since: float = 0.0  # monotonic ms of the last state change
    suspicion: Any = None  # its suspicion's timer handle, while suspect
    confirmations: set = field(default_factory=set)
    leaving: bool = False  # while suspect: a leave heard second-hand, which ends in left (rule 3)

    def claim(self) -> dict:
        if self.leaving and self.state == MemberState.SUSPECT:
            # Relayed as the leave it is (each receiver reads it as a suspicion that ends in
            # left), not as a suspicion that would end in a death elsewhere.
            c = {"endpoint": self.endpoint, "incarnation": self.incarnation, "state": MemberState.LEFT, "meta": self.meta}
            if self.service is not None:
                c["service"] = self.service
            return c
        c = {"endpoint": self.endpoint, "incarnation": self.incarnation, "state": self.state, "meta": self.meta}
        if self.by is not None and self.state == MemberState.SUSPECT:
            c["by"] = self.by
        if self.service is not None:
            c["service"] = self.service
        return c


def outranks(inc: int, state: int, held: Member) -> bool:
    """The merge rule: a higher incarnation, or the same with a stronger state."""
    return inc > held.incarnation or (inc == held.incarnation and STRENGTH[state] > STRENGTH[held.state])


class Clock:
    """Monotonic ms for timers, wall ms for incarnations; call_later on the running loop."""

    def now(self) -> float:
        return asyncio.get_running_loop().time() * 1000

    def wall(self) -> int:
        import time

        return int(time.time() * 1000)

    def call_later(self, ms: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(ms / 1000, fn)

    async def sleep(self, ms: float) -> None:
        await asyncio.sleep(ms / 1000)


Ask = Callable[[str, Callable[[int], bytes], float], Awaitable[dict | None]]


class Membership:
    def __init__(self, *, endpoint: str, seeds: list[str], meta: dict | None = None, service: int | None = None,
                 ask: Ask, clock: Clock | None = None, rng: random.Random | None = None,
                 config: MembershipConfig | None = None, on_change: Callable[[dict], None] | None = None,
                 resolve: Callable[[], Awaitable[list[str]]] | None = None):
        self.clock = clock or Clock()
        self.rng = rng or random.Random()
        self.config = config or MembershipConfig()
        self.ask = ask
        self.seeds = [s for s in seeds if s != endpoint]
        self.resolve = resolve  # the seeds found again at each join attempt (DNS seeds), or None
        self.on_change = on_change or (lambda m: None)
        self.self = Member(endpoint, self.clock.wall(), MemberState.ALIVE, dict(meta or {}), service=service)
        self.table: dict[str, Member] = {endpoint: self.self}
        self.candidates: dict[str, float] = {}  # endpoint -> expiry (monotonic ms)
        self.broadcasts: list[list] = []  # [claim, transmissions left]
        self.joined = not self.seeds and resolve is None
        self.leaving = False
        self.left = False  # its leave was said: until the socket closes, it answers with its own left claim (left_answer)
        self.tasks: list[asyncio.Task] = []
        self.probe_order: list[str] = []
        self.digest_key: tuple = ()
        self.digest_value = 0
        self.health = 0  # Lifeguard's local health score, 0 (good) to awareness_max
        self.skip = 0  # probe rounds still to sit out while health is poor
        self.rounds = 0
        self.last_round = self.clock.now()
        self.probing: set[str] = set()
        self.reconnect: dict[str, float] = {}  # members reaped while dead -> when (monotonic ms)
        self.sync_tokens = 2.0 * self.config.max_syncs_per_second  # SYNC answers in store (a token bucket)
        self.sync_tokens_at = self.clock.now()
        self.counts = {"probes": 0, "indirect": 0, "suspected": 0, "died": 0, "refuted": 0, "syncs": 0, "syncs_refused": 0, "left_relayed": 0, "candidates": 0, "refused": 0, "stalls": 0, "late_rounds": 0, "dead_probes": 0}

    # What it states.

    @property
    def endpoint(self) -> str:
        return self.self.endpoint

    def digest(self) -> int:
        """The membership digest (4.6): sum mod 2^32 of FNV-1a of `endpoint#incarnation` of the live
        members; every reply carries it, so it is made again only when the table changed."""
        key = tuple((m.endpoint, m.incarnation, m.state) for m in self.table.values())
        if key == self.digest_key:
            return self.digest_value
        total = 0
        for m in self.table.values():
            if m.state in (MemberState.ALIVE, MemberState.SUSPECT):
                total = (total + fnv1a(f"{m.endpoint}#{m.incarnation}")) & 0xFFFFFFFF
        self.digest_key, self.digest_value = key, total
        return total

    def claims(self) -> list[dict]:
        """The whole list, itself first, then the live, then the dead and left (4.6, SYNC)."""
        live = [m for m in self.table.values() if m is not self.self and m.state in (MemberState.ALIVE, MemberState.SUSPECT)]
        gone = [m for m in self.table.values() if m is not self.self and m.state not in (MemberState.ALIVE, MemberState.SUSPECT)]
        return [self.self.claim()] + [m.claim() for m in live] + [m.claim() for m in gone]

    def sample(self, n: int) -> list[dict]:
        """Its own claim and `n` others at random, for periodic anti-entropy with a live member:
        what one misses of gossip is repaired within a few exchanges, and a push-pull costs the
        same at 30 members or 1,000. The whole list while it holds no more than n + 1."""
        if len(self.table) <= n + 1:
            return self.claims()
        others = [m for m in self.table.values() if m is not self.self]
        return [self.self.claim()] + [m.claim() for m in self.rng.sample(others, n)]

    def members(self) -> list[dict]:
        names = {0: "alive", 1: "suspect", 2: "dead", 3: "left"}
        return [{"endpoint": m.endpoint, "state": names[m.state], "incarnation": m.incarnation, "meta": m.meta} for m in self.table.values()]

    def set_service(self, digest: int) -> None:
        """What it serves changed: its claim goes out at a higher incarnation (4.8)."""
        self.self.service = digest
        self.self.incarnation += 1
        self.spread(self.self.claim())

    # Dissemination.

    def spread(self, claim: dict) -> None:
        n = sum(1 for m in self.table.values() if m.state in (MemberState.ALIVE, MemberState.SUSPECT))
        times = self.config.retransmit_mult * max(1, math.ceil(math.log10(n + 1)))
        self.broadcasts = [b for b in self.broadcasts if b[0]["endpoint"] != claim["endpoint"]]
        self.broadcasts.append([claim, times])

    def piggyback(self) -> list[dict]:
        out = []
        for b in sorted(self.broadcasts, key=lambda b: -b[1])[: self.config.max_piggyback - 1]:
            out.append(b[0])
            b[1] -= 1
        self.broadcasts = [b for b in self.broadcasts if b[1] > 0]
        return [self.self.claim()] + [c for c in out if c["endpoint"] != self.endpoint]

    # Taking claims in (the rules of 4.6, then the merge rule).

    def merge(self, claims: list[dict], sender: str, answer: bool) -> None:
        """Claims from `sender`; `answer`: they came in an answer from the member asked (rule 5)."""
        horizon = self.clock.wall() + INCARNATION_HORIZON_MS
        for c in claims:
            ep, inc, state = c["endpoint"], c["incarnation"], c["state"]
            leave = False  # a left relayed by another: a suspicion that, unrefuted, ends in left
            if inc > horizon:  # 1. horizon
                self.counts["refused"] += 1
                continue
            if state == MemberState.LEFT and ep != sender:  # 3. left is the member's own word
                state, leave = MemberState.DEAD, True
            if ep == self.endpoint:
                if state != MemberState.ALIVE and not self.leaving and inc >= self.self.incarnation:
                    self.refute(inc)
                continue
            held = self.table.get(ep)
            if held is None or held.state in (MemberState.DEAD, MemberState.LEFT):
                if state != MemberState.ALIVE:  # 2. only alive introduces
                    if held is not None and outranks(inc, state, held):
                        self.apply(held, inc, state, c)
                    continue
                if held is not None and not outranks(inc, state, held):
                    continue
                if answer:
                    self.admit(c, inc)  # in an answer from the member asked (ACK, SYNC): at once
                else:
                    self.candidate(ep)  # 5. trust before use: probed, admitted when it answers
                continue
            if state == MemberState.DEAD and sender != ep:  # 4. dead is a suspicion
                state = MemberState.SUSPECT
                c = {**c, "by": c.get("by") or sender, "leaving": leave}
            if outranks(inc, state, held):
                self.apply(held, inc, state, c)
            elif state == MemberState.SUSPECT and held.state == MemberState.SUSPECT and inc == held.incarnation:
                by = c.get("by") or sender
                held.confirmations.add(by)
                # The suspicion was a leave after all, on the word of a member held live (a
                # made-up name does not turn a death into a leave).
                known = self.table.get(by)
                if leave and (by == self.endpoint or (known is not None and known.state in (MemberState.ALIVE, MemberState.SUSPECT))):
                    held.leaving = True
            if "service" in c and held.incarnation == inc:
                held.service = c["service"]

    def admit(self, c: dict, inc: int) -> None:
        ep = c["endpoint"]
        self.candidates.pop(ep, None)
        m = self.table.get(ep)
        if m is None:
            m = Member(ep, inc, MemberState.ALIVE, c.get("meta") or {}, service=c.get("service"), since=self.clock.now())
            self.table[ep] = m
        else:
            self.apply(m, inc, MemberState.ALIVE, c)
            return
        self.spread(m.claim())
        self.on_change(m.claim())

    def apply(self, m: Member, inc: int, state: int, c: dict) -> None:
        m.incarnation, m.state, m.meta = inc, state, c.get("meta") or m.meta
        m.service = c.get("service", m.service)
        m.since = self.clock.now()
        m.by = c.get("by") if state == MemberState.SUSPECT else None
        m.leaving = state == MemberState.SUSPECT and c.get("leaving") is True
        if m.suspicion is not None:
            m.suspicion.cancel()
            m.suspicion = None
        m.confirmations = set()
        if state == MemberState.SUSPECT:
            self.start_suspicion(m)
        if state == MemberState.DEAD:
            self.counts["died"] += 1
        self.spread(m.claim())
        self.on_change(m.claim())

    def candidate(self, ep: str) -> None:
        if ep in self.candidates or len(self.candidates) >= self.config.max_candidates:
            return
        self.candidates[ep] = self.clock.now() + self.config.candidate_timeout
        self.counts["candidates"] += 1
        self.tasks = [t for t in self.tasks if not t.done()]  # only the probes still under way are held
        self.tasks.append(asyncio.ensure_future(self.verify(ep)))

    async def verify(self, ep: str) -> None:
        """A candidate is probed directly and admitted when it answers (rule 5)."""
        answer = await self.ask(ep, lambda seq: codec.encode_gossip(seq, {"type": "probe", "from": self.endpoint, "target": ep, "updates": self.piggyback()}), self.config.probe_timeout * 2)
        if answer is not None and answer.get("gossip", {}).get("from") == ep:
            self.merge(answer["gossip"].get("updates", []), ep, True)
        elif self.candidates.get(ep, 0) < self.clock.now():
            self.candidates.pop(ep, None)

    def refute(self, inc: int) -> None:
        self.self.incarnation = max(self.self.incarnation, inc) + 1
        self.counts["refuted"] += 1
        self.health_by(1)  # others could not hear us: maybe our link, maybe a stall
        self.spread(self.self.claim())

    # Lifeguard's local health.

    def health_by(self, delta: int) -> None:
        self.health = min(self.config.awareness_max, max(0, self.health + delta))

    def scaled(self, ms: float) -> float:
        """A timeout or interval as this peer's health stretches it: x (score + 1)."""
        return ms * (self.health + 1)

    def stalled_now(self) -> bool:
        return self.clock.now() - self.last_round > STALL_ROUNDS * self.config.probe_interval

    def late(self) -> None:
        """This round's timer fired more than half a probe timeout late: this process is short of
        CPU (a host running more than it can, a long GC), so the silences its probes meet say as
        much about itself as about others. Its local health worsens (Lifeguard): it probes less
        often, waits longer and keeps suspicions longer, until its probes are answered again."""
        self.counts["late_rounds"] += 1
        self.health_by(1)

    def stalled(self) -> None:
        """This process was stalled (SIGSTOP, a long pause): the suspicions it holds ran on while
        it could not hear refutations, so each starts over, and its local health is worse."""
        self.counts["stalls"] += 1
        self.health_by(1)
        for m in self.table.values():
            if m.state == MemberState.SUSPECT and m.suspicion is not None:
                m.suspicion.cancel()
                self.start_suspicion(m, count=False)

    def start_suspicion(self, m: Member, count: bool = True) -> None:
        n = max(1, sum(1 for x in self.table.values() if x.state in (MemberState.ALIVE, MemberState.SUSPECT)))
        timeout = self.scaled(self.config.suspicion_mult * max(1.0, math.log10(n)) * self.config.probe_interval)
        if count:
            self.counts["suspected"] += 1
        m.suspicion = self.clock.call_later(timeout, lambda: self.suspicion_over(m, m.incarnation))

    def suspicion_over(self, m: Member, inc: int) -> None:
        m.suspicion = None
        if m.state != MemberState.SUSPECT or m.incarnation != inc:
            return
        if self.stalled_now():  # it ran out while this process could not hear a refutation
            self.stalled()
            if m.suspicion is None:
                self.start_suspicion(m, count=False)
            return
        if m.leaving:  # a leave heard second-hand, never refuted: it left
            self.counts["left_relayed"] += 1
            self.apply(m, inc, MemberState.LEFT, {"meta": m.meta, "service": m.service})
            return
        pool = [x for x in self.table.values() if x.state == MemberState.ALIVE and x.endpoint not in (m.endpoint, self.endpoint)]
        if not pool:  # nobody to ask
            self.apply(m, inc, MemberState.DEAD, {"meta": m.meta, "service": m.service})
            return
        self.background(self.last_call(m, inc, self.rng.sample(pool, min(LAST_CALL, len(pool)))))

    async def last_call(self, m: Member, inc: int, asked: list[Member]) -> None:
        """A suspicion ran out: before it ends in a death, it rides in a probe to `asked` (up to
        LAST_CALL live members, never the suspect); one that holds the member's refutation
        answers with it, and the member lives (PROTOCOL.md 4.6, the Node peer's lastCall())."""
        claim = m.claim()
        timeout = self.scaled(self.config.probe_timeout)

        async def ask(ep: str) -> None:
            answer = await self.ask(ep, lambda seq: codec.encode_gossip(seq, {"type": "probe", "from": self.endpoint, "target": ep, "updates": [claim]}), timeout)
            if answer is not None and answer.get("gossip", {}).get("type") == "ack" and not self.left:
                self.merge(answer["gossip"].get("updates", []), ep, True)

        await asyncio.gather(*(ask(x.endpoint) for x in asked))
        if self.left or m.state != MemberState.SUSPECT or m.incarnation != inc or m.suspicion is not None:
            return  # refuted, or suspected anew, meanwhile
        self.apply(m, inc, MemberState.DEAD, {"meta": m.meta, "service": m.service})

    def suspect(self, m: Member) -> None:
        if m.state != MemberState.ALIVE:
            if m.state == MemberState.SUSPECT:
                m.confirmations.add(self.endpoint)
            return
        self.apply(m, m.incarnation, MemberState.SUSPECT, {"meta": m.meta, "service": m.service, "by": self.endpoint})

    # Answering requests (on the bound socket).

    def left_answer(self, seq: int, kind: str) -> bytes:
        """After its leave, while its peer drains: a probe or a sync is answered with this peer's
        own left claim alone, and nothing it carries is taken in; a probe request is refused. So
        a member that did not hear the leave (it went straight to a few) and probes it learns it
        from the member itself, and does not declare it dead (the Node peer's leftAnswer)."""
        own = [self.self.claim()]
        if kind == "probe":
            return codec.encode_gossip(seq, {"type": "ack", "from": self.endpoint, "updates": own})
        if kind == "sync":
            return codec.encode_gossip(seq, {"type": "sync", "from": self.endpoint, "members": own})
        return codec.encode_gossip(seq, {"type": "nack", "from": self.endpoint})

    def on_probe(self, seq: int, msg: dict) -> bytes:
        if self.left:
            return self.left_answer(seq, "probe")
        sender = msg["from"]
        self.merge(msg.get("updates", []), sender, False)
        updates = self.piggyback()
        held = self.table.get(sender)
        if held is not None and held.state != MemberState.ALIVE:
            updates.append(held.claim())  # the prober learns what is said of it, and refutes
        self.correct(msg.get("updates", []), updates)
        return codec.encode_gossip(seq, {"type": "ack", "from": self.endpoint, "updates": updates})

    def correct(self, claims: list, out: list) -> None:
        """Adds to `out` this peer's alive claim of each member that `claims` doubt (suspect, dead
        or left) at an incarnation below the one it holds that member alive at: the member
        refuted since, and the prober, still waiting on its suspicion, learns it now (PROTOCOL.md
        4.6, the Node peer's correct())."""
        room = self.config.max_piggyback  # an answer grows by at most a message's worth of claims
        for c in claims:
            if room == 0:
                return
            if not isinstance(c, dict) or c.get("state") == MemberState.ALIVE:
                continue
            m = self.table.get(c.get("endpoint"))
            inc = c.get("incarnation")
            if m is None or m.state != MemberState.ALIVE or not isinstance(inc, int) or m.incarnation <= inc:
                continue
            if all(x["endpoint"] != m.endpoint for x in out):
                out.append(m.claim())
                room -= 1

    async def on_probe_req(self, seq: int, msg: dict) -> bytes:
        if self.left:
            return self.left_answer(seq, "probe-req")
        self.merge(msg.get("updates", []), msg["from"], False)
        target = msg["target"]
        held = self.table.get(target)
        if held is not None and held.state in (MemberState.ALIVE, MemberState.SUSPECT):
            answer = await self.ask(target, lambda s: codec.encode_gossip(s, {"type": "probe", "from": self.endpoint, "target": target, "updates": self.piggyback()}), self.config.probe_timeout)
            if answer is not None and answer["gossip"]["from"] == target:
                self.merge(answer["gossip"].get("updates", []), target, True)
                return codec.encode_gossip(seq, {"type": "ack", "from": target, "updates": []})
        return codec.encode_gossip(seq, {"type": "nack", "from": self.endpoint})

    def on_sync(self, seq: int, msg: dict) -> bytes:
        if self.left:
            return self.left_answer(seq, "sync")
        # Bounded: a cold start of hundreds must not crush the seeds. The sender takes the NACK
        # as no answer and tries again after its backoff (a join) or at its next push-pull.
        if not self.take_sync_token():
            self.counts["syncs_refused"] += 1
            return codec.encode_gossip(seq, {"type": "nack", "from": self.endpoint})
        # A live member's anti-entropy (a sample of more than itself) gets a sample back; a
        # joiner, a restarted member (a list of itself alone) or a stranger, the whole list.
        held = self.table.get(msg["from"])
        periodic = held is not None and held.state == MemberState.ALIVE and 1 < len(msg["members"]) <= self.config.push_pull_claims + 1
        self.merge(msg["members"], msg["from"], False)
        self.counts["syncs"] += 1
        members = self.sample(self.config.push_pull_claims) if periodic else self.claims()
        return codec.encode_gossip(seq, {"type": "sync", "from": self.endpoint, "members": members})

    def take_sync_token(self) -> bool:
        """A SYNC answer from the bucket (max_syncs_per_second, a burst of twice that), refilled by
        the time gone by; False when it is empty."""
        now = self.clock.now()
        rate = self.config.max_syncs_per_second
        self.sync_tokens = min(2.0 * rate, self.sync_tokens + (now - self.sync_tokens_at) * rate / 1000)
        self.sync_tokens_at = now
        if self.sync_tokens < 1:
            return False
        self.sync_tokens -= 1
        return True

    # Its own rounds.

    async def sync_with(self, ep: str, sample: bool = False) -> bool:
        """A push-pull with `ep`: the whole list (a join, a member held dead), or with `sample`,
        periodic anti-entropy with a live member, a sample of push_pull_claims. A NACK (the
        receiver answers too many SYNCs) is no answer: tried again later."""
        members = self.sample(self.config.push_pull_claims) if sample else self.claims()
        answer = await self.ask(ep, lambda seq: codec.encode_gossip(seq, {"type": "sync", "from": self.endpoint, "members": members}), self.config.sync_timeout)
        if answer is None or answer.get("gossip", {}).get("type") != "sync":
            return False
        self.merge(answer["gossip"]["members"], answer["gossip"]["from"], True)
        return True

    async def join(self) -> None:
        pause = self.config.join_retry_min
        while not self.joined and not self.leaving:
            seeds = [s for s in await self.resolve() if s != self.endpoint] if self.resolve is not None else self.seeds
            for seed in seeds:  # none (a name that resolves to nothing yet): wait and look again
                if await self.sync_with(seed):
                    self.joined = True
            if not self.joined:
                await self.clock.sleep(pause * (0.5 + self.rng.random()))
                pause = min(pause * 2, self.config.join_retry_max)

    def background(self, coro: Any) -> None:
        self.tasks = [t for t in self.tasks if not t.done()]
        self.tasks.append(asyncio.ensure_future(coro))

    def probe_round(self) -> None:
        """One round each interval: with poor health, one round in (score + 1) probes; every
        DEAD_PROBE_ROUNDS rounds a member held dead is probed. The probes run on their own, so a
        slow probe never delays the next round (nor looks like a stall). A round whose timer
        fired more than half a probe timeout late raises local health (a stall counts first)."""
        now = self.clock.now()
        if self.stalled_now():
            self.stalled()
        elif now - self.last_round - self.config.probe_interval > self.config.probe_timeout / 2:
            self.late()
        self.last_round = now
        if self.skip > 0:
            self.skip -= 1
        else:
            self.skip = self.health
            target = self.next_target()
            if target is not None:
                self.probing.add(target.endpoint)
                self.background(self.probe(target))
        self.rounds += 1
        if self.rounds % DEAD_PROBE_ROUNDS == 0:
            dead = self.dead_endpoints()
            if dead:
                self.background(self.probe_the_dead(self.rng.choice(dead)))
        self.reap()

    def next_target(self) -> Member | None:
        for _ in range(2):
            while self.probe_order:
                m = self.table.get(self.probe_order.pop())
                if m is not None and m.state in (MemberState.ALIVE, MemberState.SUSPECT) and m.endpoint not in self.probing:
                    return m
            self.probe_order = [m.endpoint for m in self.table.values() if m is not self.self and m.state in (MemberState.ALIVE, MemberState.SUSPECT)]
            self.rng.shuffle(self.probe_order)
        return None

    async def probe(self, m: Member) -> None:
        ep = m.endpoint
        try:
            self.counts["probes"] += 1
            timeout = self.scaled(self.config.probe_timeout)
            answer = await self.ask(ep, lambda seq: codec.encode_gossip(seq, {"type": "probe", "from": self.endpoint, "target": ep, "updates": self.piggyback()}), timeout)
            if answer is not None and answer.get("gossip", {}).get("from") == ep:
                self.health_by(-1)
                self.merge(answer["gossip"].get("updates", []), ep, True)
                return
            helpers = [x.endpoint for x in self.table.values() if x is not self.self and x.endpoint != ep and x.state == MemberState.ALIVE]
            self.rng.shuffle(helpers)
            asks = [self.ask(h, lambda seq, h=h: codec.encode_gossip(seq, {"type": "probe-req", "from": self.endpoint, "target": ep, "updates": self.piggyback()}), timeout * 2) for h in helpers[: self.config.indirect_checks]]
            self.counts["indirect"] += len(asks)
            answers = await asyncio.gather(*asks) if asks else []
            # Lifeguard: helpers that did not even answer NACK say our own link may be bad.
            self.health_by(sum(1 for a in answers if a is None) if asks else 1)
            if any(a is not None and a.get("gossip", {}).get("type") == "ack" for a in answers):
                return
            if m.state in (MemberState.ALIVE, MemberState.SUSPECT) and not self.leaving:
                self.suspect(m)
        finally:
            self.probing.discard(ep)

    def dead_endpoints(self) -> list[str]:
        """Members held dead, and those reaped while dead (for a day, at most MAX_RECONNECT)."""
        return [m.endpoint for m in self.table.values() if m.state == MemberState.DEAD] + list(self.reconnect)

    async def probe_the_dead(self, ep: str) -> None:
        """A member held dead that answers is alive after all (a healed partition, a thawed
        process): a SYNC tells it what we think, it refutes, and both sides converge."""
        self.counts["dead_probes"] += 1
        answer = await self.ask(ep, lambda seq: codec.encode_gossip(seq, {"type": "probe", "from": self.endpoint, "target": ep, "updates": []}), self.config.probe_timeout * 2)
        if answer is not None and answer.get("gossip", {}).get("type") == "ack" and not self.leaving:
            await self.sync_with(ep)

    def reap(self) -> None:
        now = self.clock.now()
        for ep, m in list(self.table.items()):
            if m is not self.self and m.state in (MemberState.DEAD, MemberState.LEFT) and now - m.since >= self.config.reap_after:
                del self.table[ep]
                if m.state == MemberState.DEAD:
                    self.reconnect[ep] = now
        for ep, at in list(self.reconnect.items()):
            if now - at > RECONNECT_MS or ep in self.table:
                del self.reconnect[ep]
        while len(self.reconnect) > MAX_RECONNECT:
            del self.reconnect[next(iter(self.reconnect))]
        for ep, expiry in list(self.candidates.items()):
            if expiry < now:
                del self.candidates[ep]

    async def push_pull(self) -> None:
        dead = self.dead_endpoints()
        if dead and self.rng.random() < DEAD_SYNC_CHANCE:
            await self.sync_with(self.rng.choice(dead))
            return
        live = [m.endpoint for m in self.table.values() if m is not self.self and m.state == MemberState.ALIVE]
        if live:
            await self.sync_with(self.rng.choice(live), sample=True)

    async def run(self) -> None:
        """Joins, then a probe round each interval and a push-pull every push-pull interval."""
        await self.join()
        last_sync = self.last_round = self.clock.now()
        while not self.leaving:
            self.probe_round()
            if self.clock.now() - last_sync >= self.config.push_pull_interval:
                last_sync = self.clock.now()
                self.background(self.push_pull())
            await self.clock.sleep(self.config.probe_interval)

    async def leave(self) -> None:
        """Says it leaves, to every live member directly (rule 3), and waits a little for their acks."""
        self.leaving = True
        self.self.state = MemberState.LEFT
        claim = self.self.claim()
        targets = [m.endpoint for m in self.table.values() if m is not self.self and m.state in (MemberState.ALIVE, MemberState.SUSPECT)]
        asks = [self.ask(ep, lambda seq, ep=ep: codec.encode_gossip(seq, {"type": "probe", "from": self.endpoint, "target": ep, "updates": [claim]}), self.config.leave_timeout) for ep in targets]
        if asks:
            await asyncio.gather(*asks)
        self.left = True
