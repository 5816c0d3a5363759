"""How a handler runs, once its work was taken (intake.py): a coroutine function on the event
loop, started at once (one that never waits, as most do not, is answered with no task made)
and cancelled once its deadline and a grace of ABANDON_GRACE_MS passed; any other function in
a worker process (worker_pool.py, which keeps the deadline: a call past it has its worker
replaced), or with no workers in a thread, which cannot be stopped: one past its deadline is
counted (`overran`) and reported, and holds its place until it returns."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable

from .worker_pool import ABANDON_GRACE_MS


class RequestContext:
    """What a handler that takes a second argument gets: which request it is, its deadline, its headers."""

    def __init__(self, method: str, request_id: int, timeout_ms: int, headers: dict, endpoint: str):
        self.method = method
        self.request_id = request_id
        self.timeout_ms = timeout_ms
        self.headers = headers
        self.endpoint = endpoint


def _call_sync(fn: Callable, args: Any) -> Any:
    return fn(args)


async def resume(coro: Any, first: Any) -> Any:
    """Carries on a coroutine that was started by hand and waits on `first` (what it yielded),
    as a task would: its awaits, its result, and a cancel thrown into it."""
    waiting = first
    while True:
        try:
            if waiting is None:
                await asyncio.sleep(0)  # a bare yield: let the loop turn once
            else:
                waiting._asyncio_future_blocking = False  # as a task does with what its coroutine yields
                await waiting
        except asyncio.CancelledError:
            try:
                waiting = coro.throw(asyncio.CancelledError())
            except StopIteration as done:  # it caught the cancel and returned
                return done.value
            continue
        except Exception:
            pass  # the coroutine reads its future's error itself when resumed
        try:
            waiting = coro.send(None)
        except StopIteration as done:
            return done.value


POOL, COROUTINE, COROUTINE_CTX, THREAD = range(4)


class Started:
    """What start() gives: `done` with its value or error when the handler finished at once; else
    `future` (its result or error when it ends; cancelled: no answer) and the deadline's `timer`."""

    __slots__ = ("done", "value", "error", "future", "timer")

    def __init__(self, done: bool, value: Any = None, error: BaseException | None = None, future: asyncio.Future | None = None, timer: Any = None):
        self.done, self.value, self.error, self.future, self.timer = done, value, error, future, timer


class Runner:
    def __init__(self, *, pool: Any, pool_index: dict[Callable, int], counts: dict, report_expired: Callable[[str, str], None]):
        self.pool = pool
        self.pool_index = pool_index  # the functions the workers run, by index
        self.counts = counts  # the peer's: expired, overran
        self.report_expired = report_expired
        self.expired: set[asyncio.Future] = set()  # coroutines cancelled at their deadline, not by their client
        self.kinds: dict[Callable, int] = {}  # how each function runs, decided once (kind)

    def pooled(self, fn: Callable) -> bool:
        return self.pool is not None and fn in self.pool_index

    def kind(self, fn: Callable) -> int:
        """How `fn` runs, decided once: POOL, COROUTINE, COROUTINE_CTX (takes a second argument) or THREAD."""
        k = self.kinds.get(fn)
        if k is None:
            if self.pooled(fn):
                k = POOL
            elif inspect.iscoroutinefunction(fn):
                k = COROUTINE_CTX if len(inspect.signature(fn).parameters) >= 2 else COROUTINE
            else:
                k = THREAD
            self.kinds[fn] = k
        return k

    def start(self, fn: Callable, args: Any, timeout_ms: int, name: str, ctx_of: Callable[[Any], RequestContext] | None = None, entry: Any = None) -> Started:
        """Runs fn(args) (fn(args, ctx_of(entry)) for a coroutine function of two parameters)."""
        loop = asyncio.get_running_loop()
        k = self.kind(fn)
        if k == POOL:  # the pool keeps its deadline
            return Started(False, future=self.pool.run(self.pool_index[fn], args, None if timeout_ms == 0 else loop.time() + timeout_ms / 1000))
        if k != THREAD:
            coro = fn(args, ctx_of(entry)) if k == COROUTINE_CTX and ctx_of is not None else fn(args)
            try:
                first = coro.send(None)
            except StopIteration as done:
                return Started(True, value=done.value)
            except BaseException as err:  # noqa: BLE001 - the handler raised before its first wait
                return Started(True, error=err)
            future = asyncio.ensure_future(resume(coro, first))
        else:
            future = loop.run_in_executor(None, _call_sync, fn, args)
        timer = None if timeout_ms == 0 else loop.call_later((timeout_ms + ABANDON_GRACE_MS) / 1000, self.overdue, future, fn, name)
        return Started(False, future=future, timer=timer)

    async def call(self, fn: Callable, args: Any, timeout_ms: int, name: str) -> Any:
        """start() as a coroutine (an event's several subscriptions run together)."""
        s = self.start(fn, args, timeout_ms, name)
        if s.done:
            if s.error is not None:
                raise s.error
            return s.value
        try:
            return await s.future
        finally:
            if s.timer is not None:
                s.timer.cancel()

    def overdue(self, future: asyncio.Future, fn: Callable, name: str) -> None:
        if future.done():
            return
        if self.kind(fn) != THREAD:
            self.counts["expired"] += 1
            self.expired.add(future)
            self.report_expired(name, f"cancelled {ABANDON_GRACE_MS} ms past it")
            future.cancel()
        else:
            self.counts["overran"] += 1
            self.report_expired(name, f"still running {ABANDON_GRACE_MS} ms past it in a thread, which cannot be stopped: it holds its place until it returns (workers=N stop such calls)")
