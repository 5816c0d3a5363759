"""A zeromesh peer in Python, the composition root: binds a ROUTER socket whose routing id is
its endpoint (PROTOCOL.md section 1), switches each message to the part that answers it, and
wires the parts: the one intake requests and events enter by (intake.py: duplicates,
admission, run, reply and remember), admission (admission.py), how handlers run and their
deadlines (runner.py, worker_pool.py), the membership (membership.py), security. It answers
PING, SERVICE_GET and MEMBERS_GET itself, and stops gracefully: it says it leaves, answers new
work DRAINING, finishes what is in flight, and closes once no message came for 100 ms.

Handlers: a dict of name -> function, or an importable module (its public functions, or its
`handlers` dict). A coroutine function runs on the event loop; any other runs off it: in
`workers` worker processes (spawned, so they hold none of the peer's sockets, and they die
with it; functions at module level, as a process pool needs), or with no workers in a thread,
so the loop keeps answering the membership however long a handler computes."""
from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import socket
from types import ModuleType
from typing import Any, Callable

import zmq
import zmq.asyncio

from . import codec
from .constants import Feature, Limits, MemberState, MessageType, Status
from .endpoint import is_loopback, normalize_bind, normalize_remote
from .errors import InvalidArgumentError, ProtocolError
from .link import Link
from .membership import Membership, MembershipConfig
from .recent import RecentRequests
from .key_proofs import KeyProofs
from .security import Security, ZapHandler, seal, unseal
from .codec import is_name
from .service import by_code_units, describe, descriptor_problem, fnv1a
from ._version import __version__
from .admission import Admission
from .intake import Intake, InvalidInput, remote_value  # noqa: F401 - remote_value and InvalidInput: for code that imported them here
from .runner import RequestContext, Runner  # noqa: F401 - RequestContext: for code that imported it here
from .worker_pool import WorkerPool
from .logs import Reports, repeats_text
from .contract import CONTRACTS_LABEL, ContractMethod, InputCheck, contracts_digest, contracts_element

EVENTS_LABEL = "zeromesh/events"
MEMBER_STATES = {MemberState.ALIVE: "alive", MemberState.SUSPECT: "suspect", MemberState.DEAD: "dead", MemberState.LEFT: "left"}

log = logging.getLogger("zeromesh.peer")

QUIET_MS = 100  # a stopping peer closes once no message came for this long
ALLOW_POLL_S = 1.0  # how often the allow-list's files are looked at
CLIENT_WINDOW_S = 3.0  # a client connection heard from within this long counts in `cc` (PONG, 4.4)
MEMBERSHIP_TYPES = {MessageType.PROBE, MessageType.PROBE_REQ, MessageType.SYNC, MessageType.SEALED, MessageType.ACK, MessageType.NACK}
REBIND_ATTEMPTS = 50  # the old socket's port is let go by ZeroMQ's I/O thread a moment after close
HWM = 1000  #     messages queued per connection at most
# Admission, as the Node peer's (peer/options.js), each default defined here once:
MAX_INFLIGHT = 1024  #     calls running (or, with workers, running and queued) before new ones are answered BUSY
MAX_QUEUE_PER_WORKER = 64  # with workers: calls waiting for one, per worker, before BUSY (max_queue = 64 x workers)
MAX_QUEUE_MS = 100  #      with workers: calls waiting are also at most this many ms of work, by the measured time per call


def handlers_of(handlers: Any) -> dict[str, Callable]:
    """A dict of handlers from a dict, a module, or a module's name. A module with a `handlers`
    dict is served that dict (a contract's dotted names: `handlers = implement(scoring, {...})`);
    any other, its public functions."""
    if isinstance(handlers, str):
        handlers = importlib.import_module(handlers)
    if isinstance(handlers, ModuleType) and isinstance(getattr(handlers, "handlers", None), dict):
        handlers = handlers.handlers
    if isinstance(handlers, ModuleType):
        names = getattr(handlers, "__all__", None) or [n for n in dir(handlers) if not n.startswith("_")]
        # A function its `events` dict names handles an event, not a request.
        subs = getattr(handlers, "events", None)
        subscribed = {id(x.get("handler") if isinstance(x, dict) else x) for x in subs.values()} if isinstance(subs, dict) else set()
        handlers = {n: getattr(handlers, n) for n in names if inspect.isfunction(getattr(handlers, n)) and getattr(handlers, n).__module__ == handlers.__name__ and id(getattr(handlers, n)) not in subscribed}
    if not isinstance(handlers, dict) or not all(callable(f) for f in handlers.values()):
        raise InvalidArgumentError("zeromesh: handlers must be a dict of name -> function, a module or a module name")
    return dict(handlers)


def parse_dns_seed(seed: str) -> tuple[str, int]:
    """dns://NAME:PORT as (NAME, PORT); anything else that starts with dns is refused, naming the form."""
    import re

    m = re.fullmatch(r"dns://([A-Za-z0-9_][A-Za-z0-9_.-]{0,252}):(\d{1,5})", seed)
    if m is None or not 1 <= int(m.group(2)) <= 65535:
        raise InvalidArgumentError(f"zeromesh: seed {seed!r}: write dns://NAME:PORT, such as dns://peers.default.svc.cluster.local:5555 (dns+srv:// is not read by the Python peer)")
    return m.group(1), int(m.group(2))


def subscriptions_of(events: dict) -> dict[str, dict[str, Callable]]:
    """{event: fn} or {event: {"group": g, "handler": fn}} as {event: {group: fn}} (the group is the event's name by default)."""
    out: dict[str, dict[str, Callable]] = {}
    for event, sub in events.items():
        group, fn = (sub.get("group", event), sub.get("handler")) if isinstance(sub, dict) else (event, sub)
        if not is_name(event, Limits.max_event_length) or not is_name(group, Limits.max_event_length) or not callable(fn):
            raise InvalidArgumentError(f"zeromesh: events: {event!r} must map to a function, or to {{'group': name, 'handler': function}}")
        out.setdefault(event, {})[group] = fn
    return out


def events_element(subs: dict[str, dict[str, Callable]]) -> list[list[str]]:
    """The SERVICE answer's events element: [event, group] pairs sorted by code units (4.11)."""
    pairs = [[e, g] for e, groups in subs.items() for g in groups]
    return sorted(pairs, key=lambda p: (by_code_units(p[0]), by_code_units(p[1])))


def events_digest(element: list[list[str]]) -> str:
    """The `zeromesh/events` label: FNV-1a of `event NUL group LF` for each pair, 8 hex digits."""
    text = "".join(e + "\0" + g + "\n" for e, g in element)
    return format(fnv1a(text), "08x")


class Peer:
    def __init__(self, *, bind: str = "tcp://127.0.0.1:0", seeds: list[str] | str | None = None,
                 handlers: Any = None, workers: int = 0, labels: dict[str, str] | None = None,
                 service_version: str | None = None, capacity: int | None = None, meta: dict | None = None,
                 max_inflight: int | None = None, drain_timeout: int = 10000, advertise: str | None = None,
                 membership: MembershipConfig | None = None, insecure: bool = False, events: dict | None = None,
                 security: dict | None = None, max_queue: int | None = None, max_queue_ms: int | None = None):
        self.bind_spec = normalize_bind(bind, "bind")
        self.advertise = normalize_remote(advertise, "advertise") if advertise is not None else None
        if isinstance(seeds, str):
            seeds = [s.strip() for s in seeds.split(",") if s.strip()]
        # Seeds: endpoints, or dns://NAME:PORT (every A and AAAA record of NAME at PORT, resolved at
        # each join attempt, as the Node peer takes them; dns+srv:// is not read here).
        self.dns_seeds = [parse_dns_seed(s) for s in (seeds or []) if isinstance(s, str) and s.startswith("dns")]
        self.seeds = [normalize_remote(s, "a seed") for s in (seeds or []) if not (isinstance(s, str) and s.startswith("dns"))]
        self.handlers = handlers_of(handlers if handlers is not None else {})
        # Contract methods (contract.py): their input is checked here, before any handler or
        # worker sees it; the handler is the function they wrap (a coroutine is one, a worker imports it).
        self.contract_methods = {name: fn for name, fn in self.handlers.items() if isinstance(fn, ContractMethod)}
        self.handlers.update({name: cm.fn for name, cm in self.contract_methods.items()})
        self.input_check = InputCheck(self.contract_methods)
        self.contracts_element = contracts_element(self.contract_methods)
        # Subscriptions (PROTOCOL.md 4.11): the `events` option, or a handler module's `events` dict.
        module_events = getattr(importlib.import_module(handlers) if isinstance(handlers, str) else handlers, "events", None)
        self.subscriptions = subscriptions_of({**(module_events if isinstance(module_events, dict) else {}), **(events or {})})
        if not isinstance(workers, int) or workers < 0 or workers > 256:
            raise InvalidArgumentError("zeromesh: workers must be a whole number from 0 to 256")
        self.workers = workers
        if workers == 0 and (max_queue is not None or max_queue_ms is not None):
            raise InvalidArgumentError("zeromesh: max_queue and max_queue_ms bound the calls waiting for worker processes: they need workers=N")
        for name, v, low in (("max_queue", max_queue, 0), ("max_queue_ms", max_queue_ms, 1), ("max_inflight", max_inflight, 1)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not low <= v <= 2**31 - 1):
                raise InvalidArgumentError(f"zeromesh: {name} must be a whole number from {low} to 2^31-1, got {v!r}")
        self.max_queue = max_queue if max_queue is not None else MAX_QUEUE_PER_WORKER * workers
        self.max_queue_ms = max_queue_ms if max_queue_ms is not None else MAX_QUEUE_MS
        self.labels = dict(labels or {})
        self.service_version = service_version
        # Requests it runs at full speed at once: its workers, unless told (the Node peer's default: its threads).
        self.capacity = capacity if capacity is not None else (workers or None)
        capacity = self.capacity
        why = descriptor_problem(sorted(self.handlers), service_version, self.labels, capacity)
        if why is not None:
            raise InvalidArgumentError(f"zeromesh: the peer's service: {why}")
        self.meta = {"version": __version__, **(meta or {})}  # gossiped in every claim about it, the version added as the Node peer adds its own
        self.max_inflight = max_inflight if max_inflight is not None else (workers + self.max_queue if workers > 0 else MAX_INFLIGHT)
        self.drain_timeout = drain_timeout
        self.membership_config = membership or MembershipConfig()
        self.insecure = insecure
        # A secured cluster (security.py): { "cluster_key": the cluster's secret key (Z85 or a file), "allow": client public keys }.
        self.security = Security(security["cluster_key"], security.get("allow")) if security else None
        # Which key each client connection proved (PROTOCOL.md 4.9): revoking a key cuts them.
        self.key_proofs = KeyProofs(self.security.secret_raw, self.security.public, lambda: self.security.allowed) if self.security else None
        self.reloads = 0
        self.clients_heard: dict[bytes, float] = {}  # client connection -> when last heard (loop time), for `cc`
        self.zap: ZapHandler | None = None
        self.state = "new"
        self.endpoint: str | None = None
        self.received = 0
        self.counts = {"received": 0, "malformed": 0, "requests": 0, "ok": 0, "errors": 0, "unknown": 0, "busy": 0, "drained": 0, "invalid": 0, "duplicates": 0, "cancelled": 0, "protocol_errors": 0, "events": 0, "expired": 0, "overran": 0, "invalid_input": 0}
        self.reports = Reports()  # repeated log lines, once a minute each (logs.py)
        self.recent = RecentRequests()
        self.pool: WorkerPool | None = None
        # With workers, the functions they run (sync handlers and subscriptions), by index.
        sync = [fn for fn in self.handlers.values() if not inspect.iscoroutinefunction(fn)]
        sync += [fn for groups in self.subscriptions.values() for fn in groups.values() if not inspect.iscoroutinefunction(fn)]
        self.pool_index: dict[Callable, int] = {}
        for fn in sync:
            self.pool_index.setdefault(fn, len(self.pool_index))
        if workers > 0:
            self.pool = WorkerPool(list(self.pool_index), workers)
        # The request path's parts: admission (one decision for every kind of work), the runner
        # (how a handler runs, and its deadline), and the one intake requests and events enter by.
        self.admission = Admission(max_inflight=self.max_inflight, counts=self.counts, pool=self.pool, max_queue=self.max_queue, max_queue_ms=self.max_queue_ms)
        self.runner = Runner(pool=self.pool, pool_index=self.pool_index, counts=self.counts, report_expired=self.report_expired)
        self.intake = Intake(handlers=self.handlers, subscriptions=self.subscriptions, admission=self.admission, runner=self.runner,
                             input_check=self.input_check, recent=self.recent, reply=self.reply, counts=self.counts,
                             report_error=self.report_error, endpoint=lambda: self.endpoint)
        self.ctx: zmq.asyncio.Context | None = None
        self.bound_ctx: zmq.Context | None = None  # the bound socket's: read in batches from the loop (drain)
        self.sock: zmq.Socket | None = None
        self.draining_soon = False
        self.outbox: dict[bytes, list] = {}  # reply entries waiting for this loop turn's flush, by connection
        self.flushing_soon = False
        self.in_drain = False
        self.in_flush = False
        self.link: Link | None = None
        self.membership: Membership | None = None
        self.tasks: list[asyncio.Task] = []
        element = events_element(self.subscriptions)
        if element:
            self.labels[EVENTS_LABEL] = events_digest(element)
        self.events_element = element or None
        if self.contracts_element is not None:
            self.labels[CONTRACTS_LABEL] = contracts_digest(self.contracts_element)
        self.descriptor = describe(list(self.handlers), service_version, self.labels, capacity)

    # Life.

    async def start(self) -> str:
        """Binds. Returns the endpoint once requests are served; joining goes on in the background."""
        if self.state != "new":
            raise InvalidArgumentError(f"zeromesh: Peer.start() called when the peer is {self.state}")
        self.state = "starting"
        self.ctx = zmq.asyncio.Context()
        self.bound_ctx = zmq.Context()
        if self.security is not None:
            self.zap = ZapHandler(self.bound_ctx, self.security)  # bound before the server socket
        if self.pool is not None:
            self.pool.start()  # spawned, not forked: no worker holds the socket bound next
        self.endpoint = self.bind_socket()
        if self.security is None and not self.insecure and not is_loopback(self.endpoint):
            await self.close_sockets()
            raise InvalidArgumentError(f"zeromesh: {self.endpoint} is not on loopback: plain traffic is only for loopback; give security (a cluster key) or insecure=True")
        self.link = Link(self.ctx, curve=self.security.member_credentials() if self.security else None)
        ask = self.link.ask
        if self.security is not None:  # membership requests travel sealed (4.7)
            key = self.security.seal_key
            ask = lambda ep, make, timeout: self.link.ask(ep, lambda seq: seal(key, make(seq)), timeout)  # noqa: E731
        self.membership = Membership(endpoint=self.endpoint, seeds=self.seeds, meta=self.meta, service=self.descriptor["digest"],
                                     ask=ask, config=self.membership_config, resolve=self.resolve_seeds if self.dns_seeds else None,
                                     on_change=self.member_changed)
        self.state = "running"
        loop = asyncio.get_running_loop()
        loop.add_reader(self.sock.getsockopt(zmq.FD), self.drain)
        loop.call_soon(self.drain)
        self.tasks.append(asyncio.ensure_future(self.membership.run()))
        if self.security is not None and self.security.allow_items:
            self.tasks.append(asyncio.ensure_future(self.watch_allow_list()))
        log.info("peer %s serving %s", self.endpoint, ", ".join(sorted(self.handlers)) or "no methods")
        return self.endpoint

    async def resolve_seeds(self) -> list[str]:
        """The endpoint seeds and what the DNS seeds name now (a name that does not resolve adds nothing)."""
        loop = asyncio.get_running_loop()
        out = list(self.seeds)
        for name, port in self.dns_seeds:
            try:
                infos = await loop.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            except OSError:
                continue
            for family, _, _, _, addr in infos:
                ep = f"tcp://[{addr[0]}]:{port}" if family == socket.AF_INET6 else f"tcp://{addr[0]}:{port}"
                if ep not in out and ep != self.endpoint:
                    out.append(ep)
        return out

    def bind_socket(self) -> str:
        """Binds with the routing id set to the advertised endpoint: with port 0 a probe learns a free port first."""
        host_port = self.bind_spec[len("tcp://"):] if self.bind_spec.startswith("tcp://") else None
        for _ in range(20):
            target = self.bind_spec
            if host_port is not None and host_port.rsplit(":", 1)[1] in ("0", "*"):
                host = host_port.rsplit(":", 1)[0]
                with socket.socket(socket.AF_INET6 if host.startswith("[") else socket.AF_INET) as probe:
                    probe.bind((host.strip("[]"), 0))
                    target = f"tcp://{host}:{probe.getsockname()[1]}"
            endpoint = self.advertise or target
            try:
                self.sock = self.new_socket(target, endpoint)
            except zmq.ZMQError as err:
                if err.errno == zmq.EADDRINUSE and target != self.bind_spec:
                    continue
                raise InvalidArgumentError(f"zeromesh: cannot bind {self.bind_spec}: {err}") from err
            return endpoint
        raise InvalidArgumentError(f"zeromesh: cannot bind {self.bind_spec}: no free port found")

    def new_socket(self, target: str, endpoint: str) -> zmq.Socket:
        """The ROUTER socket bound at `target`, its routing id `endpoint`; raises ZMQError as bind does."""
        s = self.bound_ctx.socket(zmq.ROUTER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.ROUTING_ID, endpoint.encode())
        s.setsockopt(zmq.ROUTER_MANDATORY, 1)
        s.setsockopt(zmq.SNDTIMEO, 0)
        s.setsockopt(zmq.SNDHWM, HWM)
        s.setsockopt(zmq.RCVHWM, HWM)
        s.setsockopt(zmq.MAXMSGSIZE, codec.Limits.max_message_size)
        if self.security is not None:
            self.security.server_options(s)
        try:
            s.bind(target)
        except zmq.ZMQError:
            s.close(linger=0)
            raise
        return s

    # The allow-list, read again.

    async def watch_allow_list(self) -> None:
        """Reads the allow-list again whenever its files change: a Kubernetes Secret's update, or an operator's cp, sends no signal."""
        last = self.security.fingerprint()
        while True:
            await asyncio.sleep(ALLOW_POLL_S)
            now = self.security.fingerprint()
            if now != last:
                last = now
                try:
                    await self.reload_allow_list()
                except InvalidArgumentError:
                    pass  # logged; the list stays as it was

    async def reload_allow_list(self) -> int:
        """Reads the allow-list again and lets in exactly its keys from now on: new handshakes are
        checked against it, and the open connections of a key it dropped get no more answers
        (PROTOCOL.md 4.9). Returns how many keys are allowed. SIGHUP calls it (python -m zeromesh peer)."""
        if self.security is None:
            raise InvalidArgumentError("zeromesh: reload_allow_list() needs a secured peer (security={'cluster_key': ..., 'allow': [...]})")
        try:
            keys = self.security.reload()
        except InvalidArgumentError as err:
            log.error("allow-list NOT changed: %s", err)
            raise
        self.reloads += 1
        if self.key_proofs.revoke(keys, asyncio.get_running_loop().time()) and self.state in ("running", "stopping"):
            log.warning("a key was revoked while connections that never proved their key were about: closing every connection")
            await self.close_connections()
        log.info("allow-list read again, %d client key%s allowed", len(keys), "" if len(keys) == 1 else "s")
        return len(keys)

    async def close_connections(self) -> None:
        """Closes every client connection: the socket is closed and bound again at the same
        address (clients reconnect; their handshakes meet the allow-list of now)."""
        old = self.sock
        if old is None:
            return
        address = old.getsockopt(zmq.LAST_ENDPOINT).decode()
        self.sock = None
        asyncio.get_running_loop().remove_reader(old.getsockopt(zmq.FD))
        old.close(linger=0)
        self.key_proofs.reset()
        for attempt in range(REBIND_ATTEMPTS):
            try:
                self.sock = self.new_socket(address, self.endpoint)
                break
            except zmq.ZMQError as err:
                if err.errno != zmq.EADDRINUSE or attempt == REBIND_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.02)
        asyncio.get_running_loop().add_reader(self.sock.getsockopt(zmq.FD), self.drain)
        self.drain_soon()

    async def stop(self) -> None:
        """Graceful: leaves, answers new requests DRAINING, finishes those in flight, closes."""
        if self.state in ("stopping", "stopped"):
            return
        if self.state == "new":
            self.state = "stopped"
            return
        self.state = "stopping"
        self.admission.draining = True  # new work is answered DRAINING from now on
        log.info("draining: leaving the cluster, %d requests in flight", self.inflight)
        leaving = asyncio.ensure_future(self.membership.leave())
        loop = asyncio.get_running_loop()
        end = loop.time() + self.drain_timeout / 1000
        while self.inflight > 0 and loop.time() < end:
            try:
                await asyncio.wait_for(self.admission.idle.wait(), max(0.001, end - loop.time()))
            except asyncio.TimeoutError:
                break
        await leaving
        seen, quiet_since = self.received, loop.time()
        while (loop.time() - quiet_since) * 1000 < QUIET_MS and loop.time() < end:
            await asyncio.sleep(0.02)
            if self.received != seen:
                seen, quiet_since = self.received, loop.time()
        await self.close_sockets()
        self.state = "stopped"
        log.info("stopped")

    async def close_sockets(self) -> None:
        for t in self.tasks:
            t.cancel()
        for t in list(self.intake.running.values()):
            t.cancel()
        if self.link is not None:
            await self.link.close()
        if self.sock is not None:
            try:
                asyncio.get_running_loop().remove_reader(self.sock.getsockopt(zmq.FD))
            except (RuntimeError, zmq.ZMQError):
                pass
            self.sock.close(linger=0)
            self.sock = None
        if self.pool is not None:
            await self.pool.close()
        if self.ctx is not None:
            self.ctx.term()
        if self.zap is not None:
            self.zap.close()
        if self.bound_ctx is not None:
            self.bound_ctx.term()

    @property
    def ready(self) -> bool:
        """Joined and serving (readyz); False from the moment it drains."""
        return self.state == "running" and self.membership is not None and self.membership.joined

    @property
    def inflight(self) -> int:
        """Work held now: running, or waiting for a worker (the load replies carry)."""
        return self.admission.inflight

    @property
    def latency(self) -> Callable[[float], None] | None:
        """Observes each answered request's seconds from arrival to reply (ops.py sets it when metrics are on)."""
        return self.intake.latency

    @latency.setter
    def latency(self, observe: Callable[[float], None] | None) -> None:
        self.intake.latency = observe

    def members(self) -> list[dict]:
        return self.membership.members() if self.membership is not None else []

    def stats(self) -> dict:
        out = {**self.counts, "inflight": self.inflight, "membership": dict(self.membership.counts) if self.membership else {}}
        if self.key_proofs is not None:
            out["key_proofs"] = {**self.key_proofs.stats(), "reloads": self.reloads}
        if self.pool is not None:
            p = self.pool
            out["workers"] = {**p.counts, "size": self.workers, "load": p.load, "queued": len(p.queue), "places": p.places(self.max_queue, self.max_queue_ms)}
        out["by_method"] = {m: dict(c) for m, c in self.intake.by_method.items()}
        return out

    # The socket's message switch.

    def drain(self) -> None:
        """Reads what the bound socket holds, up to a batch, without awaiting per message. ZeroMQ's
        descriptor signals edges, and any operation on the socket may take the edge, so it reads
        while ZMQ_EVENTS says a message waits (no failing read to learn there is none), and looks
        again after its replies left (or comes back for the rest)."""
        self.draining_soon = False
        sock = self.sock
        if sock is None or sock.closed:
            return
        self.in_drain = True  # the replies of what it reads leave together at its end (flush)
        try:
            for i in range(256):
                # The first read just tries (the descriptor said something came, nearly always a
                # message); the next ones ask ZMQ_EVENTS first.
                if sock.closed or (i > 0 and not sock.getsockopt(zmq.EVENTS) & zmq.POLLIN):
                    break
                try:
                    frames = sock.recv_multipart(zmq.NOBLOCK)
                except zmq.ZMQError:  # Again: nothing after all; or the socket closed
                    break
                self.on_message(frames)
            else:
                self.drain_soon()  # more waiting: the loop runs other work first
        finally:
            self.in_drain = False
            if self.outbox:
                self.flush()

    def drain_soon(self) -> None:
        if not self.draining_soon and self.sock is not None:
            self.draining_soon = True
            asyncio.get_running_loop().call_soon(self.drain)

    def on_message(self, frames: list[bytes]) -> None:
        self.received += 1
        self.counts["received"] += 1
        if len(frames) < 2:
            self.counts["malformed"] += 1
            return
        cid, body = frames[0], frames[1:]
        if self.key_proofs is not None and self.key_proofs.is_cut(cid):
            self.from_cut(cid, body)
            return
        if len(body) == 1 and body[0] == b"PING":
            self.send(cid, [b"PONG"])  # 10/FLP heartbeat (2.1)
        elif len(body) >= 2:
            self.send(cid, body)  # a 10/FLP request: the default handler echoes the body (2.1)
        else:
            self.on_frame(cid, body[0])

    def client_count(self) -> int:
        """Client connections heard from in the last CLIENT_WINDOW_S (`cc`: clients compare it to move off crowded peers)."""
        now = asyncio.get_running_loop().time()
        self.clients_heard = {cid: at for cid, at in self.clients_heard.items() if now - at <= CLIENT_WINDOW_S}
        return len(self.clients_heard)

    def from_cut(self, cid: bytes, body: list[bytes]) -> None:
        """A connection cut at a revocation: a KEY_PROOF of an allowed key, or a good seal (a
        member's), lets it be answered again; anything else is dropped and counted."""
        try:
            msg = codec.decode(body[0]) if len(body) == 1 else None
        except ProtocolError:
            msg = None
        if msg is not None and msg["type"] == MessageType.KEY_PROOF:
            self.key_proofs.prove(cid, msg["key"], msg["mac"])
        elif msg is not None and msg["type"] == MessageType.SEALED:
            self.on_frame(cid, body[0])
        else:
            self.key_proofs.counts["cut_frames"] += 1

    def send(self, cid: bytes, frames: list[bytes]) -> None:
        if self.sock is None or self.sock.closed:
            return
        try:
            self.sock.send_multipart([cid, *frames], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # gone (EHOSTUNREACH) or its queue is full (EAGAIN): a client that does not read loses replies
        if not self.in_drain and not self.in_flush:
            self.look_again()

    def look_again(self) -> None:
        """After a send outside drain(): the send may have taken the descriptor's edge that said a
        message came in, so a message waiting now is read soon (ZMQ_EVENTS, not a failing read)."""
        sock = self.sock
        if sock is not None and not sock.closed and sock.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            self.drain_soon()

    def on_frame(self, cid: bytes, frame: bytes) -> None:
        try:
            msg = codec.decode(frame)
        except ProtocolError as err:
            self.counts["malformed"] += 1
            if err.protocol_code is not None:
                self.counts["protocol_errors"] += 1
                self.send(cid, [codec.encode_error(err.protocol_code, str(err))])
            return
        t = msg["type"]
        m = self.membership
        if t not in MEMBERSHIP_TYPES:
            self.clients_heard[cid] = asyncio.get_running_loop().time()
        if self.key_proofs is not None and t not in (MessageType.KEY_PROOF, MessageType.SEALED):
            self.key_proofs.seen(cid)
            if t in (MessageType.REQUEST, MessageType.EVENT):
                self.key_proofs.asked(cid, asyncio.get_running_loop().time())
        if t == MessageType.REQUEST:
            self.intake.requests(cid, msg)
        elif t == MessageType.EVENT and self.events_element:
            self.intake.events(cid, msg)
        elif t == MessageType.PING:
            meta = {"mv": m.digest(), "inc": m.self.incarnation, "st": MemberState.LEFT if m.leaving else MemberState.ALIVE}
            if msg["seq"] > 0:  # a question, not a heartbeat: how many clients this peer holds (4.4)...
                meta["cc"] = self.client_count()
            if self.key_proofs is not None and msg["seq"] > 0:  # ...and a challenge for this connection (4.9)
                meta["ch"] = self.key_proofs.challenge(cid)
            self.send(cid, [codec.encode_pong(msg["seq"], meta)])
        elif t == MessageType.CANCEL:
            self.intake.cancel(cid, msg["ids"])
        elif t == MessageType.SERVICE_GET:
            self.send(cid, [codec.encode_service(msg["seq"], self.descriptor, Feature.EVENTS if self.events_element else 0, self.events_element, self.contracts_element)])
        elif t == MessageType.MEMBERS_GET:
            self.send(cid, [codec.encode_members(msg["seq"], m.digest(), m.claims())])
        elif t == MessageType.SEALED:
            inner = unseal(self.security.seal_key, msg["tag"], msg["inner"]) if self.security is not None else None
            try:
                gossip = codec.decode(inner) if inner is not None else None
            except ProtocolError:
                gossip = None
            if gossip is None or gossip["type"] not in (MessageType.PROBE, MessageType.PROBE_REQ, MessageType.SYNC):
                self.counts["malformed"] += 1  # a plain peer drops SEALED; a bad seal is counted and dropped
                return
            self.key_proofs.member(cid)  # a good seal: a member's connection, never cut
            self.on_gossip(cid, gossip)
        elif t == MessageType.KEY_PROOF:
            if self.key_proofs is not None:  # a plain peer ignores it
                self.key_proofs.prove(cid, msg["key"], msg["mac"])
        elif t in (MessageType.PROBE, MessageType.PROBE_REQ, MessageType.SYNC):
            if self.security is not None:
                self.counts["malformed"] += 1  # in a secured cluster clients connect too: only sealed requests count
                return
            self.on_gossip(cid, msg)
        else:
            self.counts["malformed"] += 1  # answers (REPLY, PONG, ACK, ...), and EVENT to a peer that states no subscription

    def on_gossip(self, cid: bytes, msg: dict) -> None:
        m, t, g = self.membership, msg["type"], msg["gossip"]
        if t == MessageType.PROBE:
            self.send(cid, [m.on_probe(msg["seq"], g)])
        elif t == MessageType.SYNC:
            self.send(cid, [m.on_sync(msg["seq"], g)])
        else:
            task = asyncio.ensure_future(m.on_probe_req(msg["seq"], g))
            task.add_done_callback(lambda f: self.send(cid, [f.result()]) if not f.cancelled() and f.exception() is None else None)

    # The request path: duplicates, admission, run, reply and remember.

    def reply_meta(self) -> dict:
        return {"mv": self.membership.digest(), "load": self.inflight}

    def report_error(self, method: str, value: list) -> None:
        """A handler raised: logged at warning, once a minute per method and code (logs.py)."""
        n = self.reports.reportable(f"error|{method}|{value[1]}")
        if n is not None:
            log.warning("handler %s raised%s: %s%s", method, f" {value[1]}" if value[1] else "", value[0], repeats_text(n),
                        extra={"method": method, "code": value[1], "repeats": n})

    def report_expired(self, method: str, how: str) -> None:
        n = self.reports.reportable(f"expired|{method}|{how}")
        if n is not None:
            log.warning("a call of %s passed its deadline: %s%s", method, how, repeats_text(n), extra={"method": method, "outcome": how, "repeats": n})

    def member_changed(self, claim: dict) -> None:
        """A member's state changed, as this peer sees it: logged (a death at warning, as it is news an operator wants)."""
        state = MEMBER_STATES.get(claim["state"], str(claim["state"]))
        if claim["endpoint"] != self.endpoint:
            (log.warning if state == "dead" else log.info)("member %s %s (incarnation %d)", claim["endpoint"], state, claim["incarnation"],
                                                           extra={"member": claim["endpoint"], "state": state, "incarnation": claim["incarnation"]})

    def reply(self, cid: bytes, entry: list) -> None:
        """Queues a reply entry for `cid`: the entries one loop turn answers on a connection leave
        together, in one REPLY frame (flush), as the Node peer's reply outbox sends them. So a
        client that batched its requests (the Node client does, under load) costs one send back."""
        box = self.outbox.get(cid)
        if box is None:
            box = self.outbox[cid] = []
            if not self.flushing_soon and not self.in_drain:
                self.flushing_soon = True
                asyncio.get_running_loop().call_soon(self.flush)
        box.append(entry)

    def flush(self) -> None:
        """Sends each connection's queued entries: one REPLY frame of up to max_batch entries, or,
        when the frame would not encode or fit, each entry alone (an unencodable or oversized
        result becomes an error entry of its own)."""
        self.flushing_soon = False
        if not self.outbox:
            return
        boxes, self.outbox = self.outbox, {}
        self.in_flush = True
        try:
            self.send_boxes(boxes)
        finally:
            self.in_flush = False
        self.look_again()

    def send_boxes(self, boxes: dict[bytes, list]) -> None:
        meta = self.reply_meta()
        for cid, entries in boxes.items():
            for i in range(0, len(entries), codec.Limits.max_batch):
                chunk = entries[i:i + codec.Limits.max_batch]
                try:
                    frame = codec.encode_reply(meta, chunk)
                except Exception:  # noqa: BLE001 - a result msgpack cannot encode: found entry by entry below
                    frame = None
                if frame is not None and len(frame) <= codec.Limits.max_message_size:
                    self.send(cid, [frame])
                    continue
                for entry in chunk:
                    self.send(cid, [self.alone(meta, entry)])

    def alone(self, meta: dict, entry: list) -> bytes:
        """A REPLY frame of one entry, or of the error that takes its place (4.2.2)."""
        try:
            frame = codec.encode_reply(meta, [entry])
        except Exception as err:  # a result msgpack cannot encode
            frame = codec.encode_reply(meta, [[entry[0], Status.REMOTE, [f"result could not be encoded: {err}", "ERR_ZEROMESH_ENCODE"]]])
        if len(frame) > codec.Limits.max_message_size:
            frame = codec.encode_reply(meta, [[entry[0], Status.REMOTE, [f"reply of {len(frame)} bytes is larger than a frame may be", "ERR_ZEROMESH_TOO_LARGE"]]])
        return frame

