"""The one way work enters the peer (the Node peer's peer/intake.js): REQUEST entries and EVENT
entries are two kinds of one thing, a piece of work on a client connection, and take one path:
duplicates (PROTOCOL.md section 5: a duplicate of a running one is dropped, one of a finished
one answered again from memory), admission (admission.py), for a contract method its input
checked (contract.py), the handler run (runner.py), and the answer sent and remembered. What
differs is only what runs and whether it answers: a request runs its method's handler and is
always answered; an event runs its group's subscription (or, with no group, every one to the
event) and is answered (acked, with no value) only when it asks, and only then remembered."""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from .constants import Status
from .recent import RecentRequests
from .runner import RequestContext, Runner
from .worker_pool import Expired


class InvalidInput(Exception):
    """A contract method's args its input schema refused: the REMOTE value, issues and all."""

    def __init__(self, value: list):
        super().__init__(value[0])
        self.value = value


def remote_value(err: BaseException) -> list:
    """A handler's exception as a REMOTE value (4.2): its message, and its `code` when that is a string."""
    if isinstance(err, InvalidInput):
        return err.value
    code = getattr(err, "code", None)
    return [str(err) or type(err).__name__, code if isinstance(code, str) else None]


class Work:
    """One entry: a request (`method` names it, `fns` its handler) or an event's delivery."""

    __slots__ = ("id", "name", "args", "timeout_ms", "answers", "fns", "entry", "at", "request")

    def __init__(self, id: int, name: str, args: Any, timeout_ms: int, answers: bool, fns: list, entry: dict, request: bool):
        self.id, self.name, self.args, self.timeout_ms, self.answers, self.fns, self.entry, self.request = id, name, args, timeout_ms, answers, fns, entry, request
        self.at: float | None = None


class Intake:
    def __init__(self, *, handlers: dict[str, Callable], subscriptions: dict[str, dict[str, Callable]], admission: Any, runner: Runner,
                 input_check: Any, recent: RecentRequests, reply: Callable[[bytes, list], None],
                 counts: dict, report_error: Callable[[str, list], None], endpoint: Callable[[], str | None]):
        self.handlers = handlers
        self.subscriptions = subscriptions
        self.admission = admission
        self.runner = runner
        self.input_check = input_check
        self.recent = recent
        self.reply = reply  # queues a reply entry for a connection (peer.py sends them, batched)
        self.counts = counts
        self.report_error = report_error
        self.endpoint = endpoint
        self.running: dict[tuple[bytes, int], asyncio.Future] = {}
        self.by_method: dict[str, dict[str, int]] = {}  # answers and handler errors by method, for metrics
        self.latency: Callable[[float], None] | None = None  # observes each answered request's seconds from arrival, once metrics are on
        self.served_text: str | None = None

    # The two kinds, as they come.

    def requests(self, cid: bytes, msg: dict) -> None:
        for bad in msg["invalid"]:
            self.counts["invalid"] += 1
            self.reply(cid, [bad["id"], Status.INVALID_REQUEST, [f"invalid request: {bad['reason']}", None]])
        memory = self.recent.of(cid)
        arrived = asyncio.get_running_loop().time() if self.latency is not None else None
        for req in msg["requests"]:
            fn = self.handlers.get(req["method"])
            w = Work(req["id"], req["method"], req["args"], req["timeout_ms"], True, [] if fn is None else [fn], req, True)
            w.at = arrived
            self.take(cid, memory, w)

    def events(self, cid: bytes, msg: dict) -> None:
        for bad in msg["invalid"]:
            self.counts["invalid"] += 1
            if bad["ack"]:
                self.reply(cid, [bad["id"], Status.INVALID_REQUEST, [f"invalid event: {bad['reason']}", None]])
        memory = self.recent.of(cid)
        for ev in msg["events"]:
            groups = self.subscriptions.get(ev["event"], {})
            fns = list(groups.values()) if ev["group"] is None else [groups[ev["group"]]] if ev["group"] in groups else []
            self.take(cid, memory, Work(ev["id"], ev["event"], ev["payload"], ev["timeout_ms"], ev["ack"], fns, ev, False))

    def cancel(self, cid: bytes, ids: list[int]) -> None:
        for rid in ids:
            task = self.running.get((cid, rid))
            if task is not None:
                self.counts["cancelled"] += 1
                task.cancel()

    # The one path.

    def take(self, cid: bytes, memory: Any, w: Work) -> None:
        if w.answers:
            seen = memory.begin(w.id)
            if seen is not None:
                self.counts["duplicates"] += 1
                if seen is not RecentRequests.RUNNING:
                    self.reply(cid, seen)  # the entry it was answered with, again
                return
        self.counts["requests" if w.request else "events"] += 1
        fns = w.fns
        refusal = self.admission.verdict(bool(fns), self.runner.pooled(fns[0]) if len(fns) == 1 else bool(fns) and all(map(self.runner.pooled, fns)))
        if refusal is not None:
            if w.answers:
                memory.forget(w.id)  # no refusal is remembered (PROTOCOL.md section 5)
                self.reply(cid, [w.id, refusal[0], [refusal[1] if refusal[1] is not None else self.unknown(w), None]])
            return
        if w.request:
            bad = self.input_check.refusal(w.name, w.args) if self.input_check.validators else None
            if bad is not None:  # the handler never runs (PROTOCOL.md 4.2.2); answered as a handler's error is
                self.counts["invalid_input"] += 1
                self.finished(cid, memory, w, None, InvalidInput(bad))
                return
        if len(fns) == 1:
            s = self.runner.start(fns[0], w.args, w.timeout_ms, w.name, self.context if w.request else None, w.entry)
            if s.done:
                self.finished(cid, memory, w, s.value, s.error)
                return
            future, timer = s.future, s.timer
        else:  # an event without a group: every subscription to it, together
            future = asyncio.ensure_future(asyncio.gather(*(self.runner.call(fn, w.args, w.timeout_ms, w.name) for fn in w.fns)))
            timer = None
        if w.answers:
            self.running[(cid, w.id)] = future
        future.add_done_callback(lambda f, cid=cid, memory=memory, w=w, timer=timer: self.ran(cid, memory, w, f, timer))

    def context(self, r: dict) -> RequestContext:
        return RequestContext(r["method"], r["id"], r["timeout_ms"], r["headers"], self.endpoint())

    def unknown(self, w: Work) -> str:
        if not w.request:
            e = w.entry
            return f'no subscription to "{e["event"]}"' + ("" if e["group"] is None else f' in group "{e["group"]}"')
        if self.served_text is None:
            self.served_text = ", ".join(sorted(self.handlers)) or "no methods"
        return f'unknown method "{w.name}"; this peer serves {self.served_text}'

    def ran(self, cid: bytes, memory: Any, w: Work, f: asyncio.Future, timer: Any) -> None:
        if w.answers:
            self.running.pop((cid, w.id), None)
        if timer is not None:
            timer.cancel()
        if f.cancelled():
            self.runner.expired.discard(f)
            self.finished(cid, memory, w, None, None, silent=True)  # cancelled by its client, or at its deadline: no answer
            return
        err = f.exception()
        if isinstance(err, Expired):
            self.counts["expired"] += 1
            self.runner.report_expired(w.name, str(err))
            self.finished(cid, memory, w, None, None, silent=True)  # the client has its own timeout: no answer
            return
        self.finished(cid, memory, w, None if err is not None else f.result(), err)

    def finished(self, cid: bytes, memory: Any, w: Work, value: Any, err: BaseException | None, silent: bool = False) -> None:
        """The work is over: its place is free, its answer (if any) leaves and is remembered."""
        self.admission.release()
        if silent:
            return
        if w.request:
            by = self.by_method.get(w.name)
            if by is None:
                by = self.by_method[w.name] = {"requests": 0, "errors": 0}
            by["requests"] += 1
            if err is None:
                self.counts["ok"] += 1
            else:
                self.counts["errors"] += 1
                by["errors"] += 1
        if err is None:
            entry = [w.id, Status.OK, value if w.request else None]
        else:
            entry = [w.id, Status.REMOTE, remote_value(err)]
            if not isinstance(err, InvalidInput):
                self.report_error(w.name, entry[2])
        if w.request and self.latency is not None and w.at is not None:
            self.latency(asyncio.get_running_loop().time() - w.at)
        if w.answers:
            self.reply(cid, entry)
            memory.finish(w.id, entry)
