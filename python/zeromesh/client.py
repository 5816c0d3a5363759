"""A zeromesh client in Python: starts from seeds, learns the members from their lists (and
again when a reply's `mv` says the membership changed), asks each peer what it serves, and
sends each request to a peer that serves its method, chosen by the power of two choices over
the requests in flight weighted by latency. It fails over as the Node client's policy says
(client/failover.js): a refusal (busy, draining, not serving, not sent) goes to another peer
whatever the request; a lost connection or an attempt that timed out is retried elsewhere only
when the request is idempotent, within `max_attempts` and a retry budget (the first attempt
lost with its connection counted in neither: its peer went away holding it); the deadline holds
for the whole call. Heartbeats (PING, seq 0) notice a peer that froze.

`SyncClient` wraps it for scripts and notebooks: the same calls, blocking."""
from __future__ import annotations

import asyncio
import itertools
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import zmq.asyncio

from . import codec
from .constants import MemberState, Status
from .endpoint import host_of, normalize_remote
from .errors import (BusyError, ClosedError, ConnectionLostError, DrainingError, InvalidArgumentError,
                     NoPeersError, RemoteError, UnknownMethodError, ZeromeshTimeoutError, REMOTE_WORKER_EXIT)
from .failover import LOST, REFUSED, THREAD_ENDED, Call, decide
from .link import Link

HEARTBEAT_MS = 1000  #   a peer is pinged this often...
SILENT_MS = 3000  #      ...and taken down when nothing came from it for this long
DOWN_RETRY_MS = 500  #   a down peer is pinged back this often
JITTER_MS = 20  #        in-doubt retries spread over this
STALE_ANSWERS = 16  #    a peer's latency estimate is stale once this many answers came from others
UNROUTABLE_MS = 500  #   once every peer up said what it serves, a method none serves for this long fails UNKNOWN_METHOD
BUSY_RECHECK_MS = 50  #  a call refused busy everywhere looks again after this at most (other clients' calls end unseen)
PROOF_WAIT_MS = 1000  #  a secured connection waits this long for the challenge to prove its key with


def elsewhere(peers: list, tried: set) -> list:
    """Those of `peers` at another address than every endpoint `tried`, while there is one (peers of
    one host share its faults: the Node client's rule, client/call-path.js); else `peers`."""
    if not tried:
        return peers
    hosts = {host_of(ep) for ep in tried}
    return [p for p in peers if host_of(p.endpoint) not in hosts] or peers


@dataclass
class PeerState:
    endpoint: str
    up: bool = False
    inflight: int = 0
    latency_ms: float = 1.0
    serves: set | None = None  # what it said it serves (SERVICE), None until it did
    heard_at: float = 0.0
    mv: int | None = None
    calls: set = field(default_factory=set)
    answered_at: int = 0  # the client's answer count when this peer last answered
    samples: int = 0  #     latency samples taken: the first is provisional (a fresh connection's is slow)
    freed: asyncio.Event = field(default_factory=asyncio.Event)  # set (and replaced) when a call of ours here ends, for calls it refused busy
    waiting: int = 0  #     calls waiting on it


class RetryBudget:
    """Retries may be at most `ratio` of requests plus `per_second` a second (the Node client's defaults)."""

    def __init__(self, ratio: float = 0.2, per_second: float = 10.0):
        self.ratio, self.per_second = ratio, per_second
        self.tokens = per_second
        self.at = time.monotonic()

    def deposit(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.tokens + self.ratio + (now - self.at) * self.per_second, 10 * self.per_second + 100)
        self.at = now

    def left(self) -> bool:
        """Whether a retry may be drawn now (decide() reads it; withdraw() takes it)."""
        return self.tokens >= 1

    def withdraw(self) -> bool:
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Client:
    def __init__(self, seeds: list[str] | str, *, timeout: int = 5000, max_attempts: int = 3, rng: random.Random | None = None,
                 security: dict | None = None):
        if isinstance(seeds, str):
            seeds = [s.strip() for s in seeds.split(",") if s.strip()]
        if not seeds:
            raise InvalidArgumentError("zeromesh: Client(seeds=...) needs at least one seed, such as tcp://127.0.0.1:5555")
        self.seeds = [normalize_remote(s, "a seed") for s in seeds]
        if not isinstance(timeout, int) or not 1 <= timeout <= 2**31 - 1:
            raise InvalidArgumentError("zeromesh: timeout must be a whole number of milliseconds from 1 to 2^31-1")
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.rng = rng or random.Random()
        self.peers_by_ep: dict[str, PeerState] = {}
        self.pending: dict[int, asyncio.Future] = {}
        self.ids = itertools.count(1)
        self.budget = RetryBudget()
        self.ctx: zmq.asyncio.Context | None = None
        self.link: Link | None = None
        self.tasks: list[asyncio.Task] = []
        self.closed = False
        self.started = False
        # A secured cluster (1.2): { "cluster_public": the cluster's public key, "secret_key": this client's } (Z85 or files).
        self.curve = None
        if security:
            from .security import key_text, public_of
            secret = key_text(security["secret_key"], "secret", "the client's key")
            self.curve = {"server_key": key_text(security["cluster_public"], "public", "the cluster's public key").encode(),
                          "public_key": public_of(secret).encode(), "secret_key": secret.encode()}
        self.counts = {"requests": 0, "ok": 0, "retries": 0, "failed": {}, "proofs": 0}
        self.answers = 0  # answers so far, all peers together (for staleness)
        self.changed = asyncio.Event()  # set (and replaced) when the peers change: calls waiting for one wake on it
        self.waiting = 0  # calls waiting on it

    # Life.

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        self.ctx = zmq.asyncio.Context()
        self.link = Link(self.ctx, on_reply=self.on_reply, curve=self.curve, prove=self.prove_key if self.curve else None)
        for ep in self.seeds:
            self.know(ep)
        self.tasks.append(asyncio.ensure_future(self.keep_up()))

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.notify()  # calls waiting for a peer look again, and see it closed
        for t in self.tasks:
            t.cancel()
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(ClosedError("zeromesh: the client was closed"))
        if self.link is not None:
            await self.link.close()
        if self.ctx is not None:
            self.ctx.term()

    async def prove_key(self, ep: str) -> None:
        """Proves this client's key on a new connection to `ep` (PROTOCOL.md 4.9): a PING (a
        question, not a heartbeat) asks for a challenge, KEY_PROOF answers it; a peer that sends
        none (plain, or older) is asked nothing more. Sent ahead of anything else on it (link.py)."""
        from zmq.utils import z85

        from .key_proof import key_proof

        pong = await self.link.ask(ep, codec.encode_ping, PROOF_WAIT_MS, now=True)
        ch = (pong or {}).get("meta", {}).get("ch")
        if not isinstance(ch, bytes) or not 0 < len(ch) <= 64:
            return
        public = z85.decode(self.curve["public_key"])
        mac = key_proof(z85.decode(self.curve["secret_key"]), z85.decode(self.curve["server_key"]), ch)
        if mac is not None and self.link.send(ep, codec.encode_key_proof(public, mac), now=True):
            self.counts["proofs"] += 1

    async def __aenter__(self) -> "Client":
        self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def peers(self) -> list[dict]:
        return [{"endpoint": p.endpoint, "state": "up" if p.up else "down", "inflight": p.inflight, "latency_ms": p.latency_ms,
                 "methods": sorted(p.serves) if p.serves is not None else None} for p in self.peers_by_ep.values()]

    def stats(self) -> dict:
        return {**self.counts, "failed": dict(self.counts["failed"]), "inflight": len(self.pending)}

    # What it knows of the peers.

    def know(self, ep: str) -> PeerState:
        p = self.peers_by_ep.get(ep)
        if p is None:
            p = self.peers_by_ep[ep] = PeerState(ep)
            self.tasks.append(asyncio.ensure_future(self.ask_service(p)))
        return p

    async def ask_service(self, p: PeerState) -> None:
        answer = await self.link.ask(p.endpoint, codec.encode_service_get, 1000)
        if answer is not None and answer.get("service") is not None:
            p.serves = set(answer["service"]["methods"])
            self.heard(p)
            self.notify()

    async def learn_members(self, p: PeerState) -> None:
        answer = await self.link.ask(p.endpoint, codec.encode_members_get, 1000)
        if answer is None or "members" not in answer:
            return
        p.mv = answer["digest"]
        for m in answer["members"]:
            if m["state"] == MemberState.ALIVE:
                self.know(m["endpoint"])
            elif m["endpoint"] in self.peers_by_ep and m["endpoint"] not in self.seeds:
                q = self.peers_by_ep[m["endpoint"]]
                if not q.up or m["state"] == MemberState.LEFT:
                    self.down(q)

    def heard(self, p: PeerState) -> None:
        p.heard_at = time.monotonic() * 1000
        if not p.up:
            p.up = True
            self.notify()

    def down(self, p: PeerState) -> None:
        if p.up:
            p.up = False
            self.notify()
        for rid in list(p.calls):
            fut = self.pending.get(rid)
            if fut is not None and not fut.done():
                fut.set_exception(ConnectionLostError(f"zeromesh: lost {p.endpoint} while a request was in flight"))

    async def keep_up(self) -> None:
        """Heartbeats for the up peers, pings back for the down ones, and the member lists of the seeds."""
        await asyncio.gather(*(self.learn_members(self.know(ep)) for ep in self.seeds))
        while not self.closed:
            now = time.monotonic() * 1000
            for p in list(self.peers_by_ep.values()):
                if p.up and now - p.heard_at >= SILENT_MS:
                    self.down(p)
                elif not p.up or now - p.heard_at >= HEARTBEAT_MS:
                    self.tasks.append(asyncio.ensure_future(self.ping(p)))
                if p.serves is None:
                    self.tasks.append(asyncio.ensure_future(self.ask_service(p)))
            self.tasks = [t for t in self.tasks if not t.done()]
            await asyncio.sleep(DOWN_RETRY_MS / 1000)

    async def ping(self, p: PeerState) -> None:
        answer = await self.link.ask(p.endpoint, codec.encode_ping, SILENT_MS)
        if answer is None:
            return
        if answer.get("meta", {}).get("st") == MemberState.LEFT:
            self.down(p)
            return
        self.heard(p)

    def on_reply(self, ep: str, msg: dict) -> None:
        p = self.peers_by_ep.get(ep)
        if p is not None:
            self.heard(p)
            mv = msg["meta"].get("mv")
            if mv is not None and mv != p.mv:
                p.mv = mv
                self.tasks.append(asyncio.ensure_future(self.learn_members(p)))
        for r in msg["replies"]:
            fut = self.pending.get(r["id"])
            if fut is not None and not fut.done():
                fut.set_result(r)

    # Calls.

    def pick(self, method: str, tried: set) -> PeerState | None:
        """The power of two choices over the up peers serving `method`, not tried yet when others are."""
        serving = [p for p in self.peers_by_ep.values() if p.up and p.serves is not None and method in p.serves]
        fresh = elsewhere([p for p in serving if p.endpoint not in tried] or serving, tried)
        if not fresh:
            return None
        a, b = (self.rng.sample(fresh, 2) if len(fresh) > 1 else (fresh[0], fresh[0]))
        # An estimate not refreshed while STALE_ANSWERS answers came from the others is stale: such a
        # peer counts as idle-cheap, so serial load spreads instead of staying where one early
        # answer was fast (the Node client's rule, client/peak-ewma.js).
        floor = min(p.latency_ms for p in fresh)
        cost = lambda p: (p.inflight + 1) * (floor if self.answers - p.answered_at > STALE_ANSWERS else p.latency_ms)  # noqa: E731
        if a.inflight == 0 and b.inflight == 0:
            return a  # both idle (serial load): the random pick, so it spreads over identical peers
        return a if cost(a) <= cost(b) else b

    def unroutable(self, method: str) -> Exception:
        known = [p for p in self.peers_by_ep.values() if p.up and p.serves is not None]
        if known:
            return UnknownMethodError(f'zeromesh: no peer serves "{method}"; the peers known serve {", ".join(sorted(set().union(*(p.serves for p in known)))) or "nothing"}')
        return NoPeersError(f"zeromesh: no peer reachable within the timeout (tried {', '.join(self.peers_by_ep)})")

    async def request(self, method: str, args: Any = None, *, timeout: int | None = None, idempotent: bool = True) -> Any:
        """`method(args)` on a peer that serves it: its result, or a coded error."""
        if self.closed:
            raise ClosedError("zeromesh: the client is closed")
        if not isinstance(method, str) or not 0 < len(method) <= 256:
            raise InvalidArgumentError("zeromesh: method must be a string of 1 to 256 characters")
        self.start()
        timeout = self.timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout / 1000
        self.counts["requests"] += 1
        self.budget.deposit()
        tried: set[str] = set()
        attempts = 0
        losses = 0  # attempts lost with their connection and moved
        ended_thread = False  # a run of it ended a peer's worker (retried elsewhere once)
        began = loop.time()
        last: Exception | None = None
        try:
            while True:
                if self.closed:
                    raise ClosedError("zeromesh: the client was closed")
                left = deadline - loop.time()
                if left <= 0:
                    raise last if isinstance(last, (BusyError, DrainingError)) else ZeromeshTimeoutError(f'zeromesh: "{method}" got no reply within {timeout} ms ({attempts} attempts)')
                p = self.pick(method, tried)
                if p is None:
                    # No peer for it yet: wait for one to come up or say what it serves. Once every
                    # peer up has said and none serves it for UNROUTABLE_MS, it is nobody's method.
                    settled = any(q.up and q.serves is not None for q in self.peers_by_ep.values()) and all(q.serves is not None for q in self.peers_by_ep.values() if q.up)
                    if settled and loop.time() - began > UNROUTABLE_MS / 1000:
                        raise self.unroutable(method)
                    await self.changes(min(left, UNROUTABLE_MS / 1000 - (loop.time() - began)) if settled else left)
                    continue
                attempts += 1
                tried.add(p.endpoint)
                kind, value = await self.attempt(p, method, args, left)
                if kind == "ok":
                    self.counts["ok"] += 1
                    return value
                if kind == "timeout":
                    raise value  # the attempt had the whole deadline: it is over
                if kind == "refused" and isinstance(value, BusyError):
                    # Not an attempt: a place, here or elsewhere, within the deadline. One frees when
                    # a call of ours ends or a peer changes (we are told); calls of other clients end
                    # unseen, so the peers are looked at again after BUSY_RECHECK_MS at most.
                    attempts -= 1
                    last = value
                    await self.changes(min(left, BUSY_RECHECK_MS / 1000), p)
                    continue
                worker_ended = kind == "error" and isinstance(value, RemoteError) and value.remote_code == REMOTE_WORKER_EXIT
                if kind == "error" and not worker_ended:
                    raise value
                outcome = THREAD_ENDED if worker_ended else REFUSED if kind == "refused" else LOST
                last = value
                d = decide(Call(attempts, idempotent, method, last_error=value, losses=losses, ended_thread=ended_thread), outcome,
                           max_attempts=self.max_attempts, budget_left=self.budget.left(), random=self.rng.random, endpoint=p.endpoint, error=value)
                if d.action != "retry":
                    raise d.error if d.error is not None else value
                if d.spend:
                    self.budget.withdraw()
                losses += outcome == LOST
                ended_thread = ended_thread or worker_ended
                self.counts["retries"] += 1
                if d.delay > 0:
                    await asyncio.sleep(d.delay / 1000)  # the jitter of an in-doubt retry, by design (failover.py)
        except Exception as err:
            code = getattr(err, "code", type(err).__name__)
            self.counts["failed"][code] = self.counts["failed"].get(code, 0) + 1
            raise

    async def wait_for(self, method: str, *, count: int = 1, timeout: int | None = None) -> list[str]:
        """The endpoints of the up peers serving `method`, once there are `count` of them (as the
        Node client's waitFor); ZeromeshTimeoutError after `timeout` ms (the client's timeout)."""
        if self.closed:
            raise ClosedError("zeromesh: the client is closed")
        if not isinstance(count, int) or count < 1:
            raise InvalidArgumentError("zeromesh: wait_for(count=...) must be a whole number, 1 or more")
        self.start()
        loop = asyncio.get_running_loop()
        limit = self.timeout if timeout is None else timeout
        deadline = loop.time() + limit / 1000
        while True:
            serving = [p.endpoint for p in self.peers_by_ep.values() if p.up and p.serves is not None and method in p.serves]
            if len(serving) >= count:
                return serving
            if self.closed:
                raise ClosedError("zeromesh: the client closed while waiting for peers")
            left = deadline - loop.time()
            if left <= 0:
                raise ZeromeshTimeoutError(f'zeromesh: {len(serving)} of {count} peers serving "{method}" up within {limit} ms')
            await self.changes(left)

    async def changes(self, timeout: float, at: PeerState | None = None) -> None:
        """Until the peers change (one up or down, a service answer), or with `at`, until a call
        of ours at that peer is over (a place there is free); `timeout` s at most."""
        if timeout <= 0:
            return
        if at is not None:
            at.waiting += 1
        else:
            self.waiting += 1
        try:
            await asyncio.wait_for((at.freed if at is not None else self.changed).wait(), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            if at is not None:
                at.waiting -= 1
            else:
                self.waiting -= 1

    def notify(self) -> None:
        """The peers changed: every call waiting for a peer looks again."""
        if self.waiting:
            self.changed.set()
            self.changed = asyncio.Event()

    async def attempt(self, p: PeerState, method: str, args: Any, left: float) -> tuple[str, Any]:
        rid = next(self.ids)
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        p.calls.add(rid)
        p.inflight += 1
        started = time.monotonic()
        try:
            if not self.link.send(p.endpoint, codec.encode_request([[rid, method, args, max(1, int(left * 1000)), None, 0]])):
                return "refused", NoPeersError(f"zeromesh: could not send to {p.endpoint}")
            try:
                r = await asyncio.wait_for(fut, left)
            except asyncio.TimeoutError:
                self.link.send(p.endpoint, codec.encode_cancel([rid]))
                return "timeout", ZeromeshTimeoutError(f'zeromesh: "{method}" got no reply within its deadline')
            except ConnectionLostError as err:
                return "lost", err
        finally:
            self.pending.pop(rid, None)
            p.calls.discard(rid)
            p.inflight -= 1
            if p.waiting:  # a place of ours at p is free: the calls it refused busy look again
                p.freed.set()
                p.freed = asyncio.Event()
        ms = (time.monotonic() - started) * 1000
        p.latency_ms = ms if p.samples < 2 else 0.8 * p.latency_ms + 0.2 * ms  # the first sample is replaced by the next
        p.samples += 1
        self.answers += 1
        p.answered_at = self.answers
        status, value = r["status"], r["value"]
        if status == Status.OK:
            return "ok", value
        message = value[0] if isinstance(value, list) and value else str(value)
        code = value[1] if isinstance(value, list) and len(value) > 1 else None
        if status == Status.REMOTE:
            return "error", RemoteError(message, code)
        if status == Status.BUSY:
            return "refused", BusyError(f"zeromesh: {p.endpoint}: {message}")
        if status == Status.DRAINING:
            self.down(p)
            return "refused", DrainingError(f"zeromesh: {p.endpoint} is draining")
        if status == Status.UNKNOWN_METHOD:
            if p.serves is not None:
                p.serves.discard(method)
            return "refused", UnknownMethodError(message, retryable=True)
        if status == Status.INVALID_REQUEST:
            return "error", InvalidArgumentError(f"zeromesh: {p.endpoint} refused the request: {message}")
        return "error", RemoteError(f"zeromesh: {p.endpoint} answered with unknown status {status}")


class SyncClient:
    """A Client for code that does not run an event loop (scripts, notebooks): each call blocks."""

    def __init__(self, seeds: list[str] | str, **options: Any):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="zeromesh-client", daemon=True)
        self.thread.start()
        self.client = self.run(self.make(seeds, options))

    async def make(self, seeds: Any, options: dict) -> Client:
        c = Client(seeds, **options)
        c.start()
        return c

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def request(self, method: str, args: Any = None, **options: Any) -> Any:
        return self.run(self.client.request(method, args, **options))

    def peers(self) -> list[dict]:
        return self.run(self._peers())

    async def _peers(self) -> list[dict]:
        return self.client.peers()

    def close(self) -> None:
        self.run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)

    def __enter__(self) -> "SyncClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
