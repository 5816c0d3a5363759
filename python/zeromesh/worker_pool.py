"""The peer's pool of worker processes (`workers=N`), as the Node peer's worker-pool.js runs its
threads: each worker runs one call at a time; calls wait here, in the peer, in arrival order,
until a worker is free. A call whose deadline passes while it waits is dropped unrun; one
still running ABANDON_GRACE_MS past its deadline is abandoned: its worker is killed and
replaced (the client already has its timeout error, so it gets no answer). A worker that exits
or crashes fails its call with ERR_ZEROMESH_WORKER_EXIT and is replaced.

Workers are started with multiprocessing's spawn, never forked from the peer: a forked child
would hold the peer's bound socket, and keep its port after the peer died. They die with the
peer (worker.py). So the handlers must be importable functions (module level), as any process
pool needs, and a script that makes a Peer with workers must guard its start with
`if __name__ == "__main__":`, as multiprocessing's spawn asks.

Places: what the peer may hold for its workers, one running on each and at most `max_queue`
waiting, or fewer when the measured time per call says they would be more than `max_queue_ms`
of work (each worker keeps at least one waiting); before any call is measured, the whole queue.
What a killed peer takes with it, and what waits at one peer while another could run it
sooner, is then bounded by time (the Node peer's maxQueueMs)."""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import pickle
from collections import deque
from typing import Any, Callable

from . import worker as worker_main
from .errors import REMOTE_WORKER_EXIT, InvalidArgumentError

log = logging.getLogger("zeromesh.pool")

ABANDON_GRACE_MS = 50  #     a call still running this long past its deadline is abandoned, its worker replaced (the Node peer's)
TASK_MS_WEIGHT = 0.2  #      of a new measurement in the time per call (a moving average)
RESPAWN_PAUSE_S = 1.0  #     a replacement that failed to start is tried again after this
CLOSE_WAIT_S = 1.0  #        closing waits this long for idle workers to exit, then kills them
REAP_WAIT_S = 1.0  #         a worker whose sentinel closed is reaped within this (microseconds, as a rule)


class Expired(Exception):
    """The call's deadline passed (waiting, or running past its grace): no answer is sent, the client has its own timeout."""

    code = "ERR_ZEROMESH_EXPIRED"


class WorkerExit(Exception):
    """The worker running the call exited or crashed."""

    code = REMOTE_WORKER_EXIT


class Task:
    __slots__ = ("id", "index", "args", "deadline", "future", "began")

    def __init__(self, id: int, index: int, args: Any, deadline: float | None, future: asyncio.Future):
        self.id, self.index, self.args, self.deadline, self.future = id, index, args, deadline, future
        self.began = 0.0


class Worker:
    __slots__ = ("process", "conn", "alive", "task", "timer", "retired")

    def __init__(self, process: Any, conn: Any, alive: Any):
        self.process, self.conn, self.alive = process, conn, alive
        self.task: Task | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.retired = False  # killed on purpose (a call past its deadline) or closed: its exit is expected


def check_functions(functions: list[Callable]) -> None:
    """Functions a spawned worker can import: pickled by reference (module and name)."""
    for fn in functions:
        try:
            pickle.dumps(fn)
        except Exception as err:
            raise InvalidArgumentError(f"zeromesh: handler {getattr(fn, '__qualname__', fn)!r} cannot run in a worker process ({err}): "
                                       "workers import handlers by name, so they must be functions at module level; or give workers=0") from err


class WorkerPool:
    def __init__(self, functions: list[Callable], size: int, *, grace_ms: float = ABANDON_GRACE_MS):
        check_functions(functions)
        self.functions = list(functions)
        self.size = size
        self.grace_ms = grace_ms
        self.mp = multiprocessing.get_context("spawn")
        self.workers: list[Worker] = []
        self.idle: list[Worker] = []
        self.queue: deque[Task] = deque()
        self.next_id = 1
        self.task_ms: float | None = None  # measured time per call (None: none measured yet)
        self.closed = False
        self.counts = {"ran": 0, "expired": 0, "abandoned": 0, "crashed": 0, "replaced": 0, "start_failures": 0}
        self.loop: asyncio.AbstractEventLoop | None = None

    # Life.

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        for _ in range(self.size):
            self.spawn()

    def spawn(self) -> None:
        """Starts one worker; one that fails to start is tried again later."""
        if self.closed:
            return
        conn, child_conn = self.mp.Pipe()
        alive_r, alive_w = self.mp.Pipe(duplex=False)
        process = self.mp.Process(target=worker_main.main, args=(child_conn, alive_r, os.getpid(), self.functions),
                                  name="zeromesh-worker", daemon=True)
        try:
            process.start()
        except Exception as err:  # noqa: BLE001 - out of processes, memory, a handler module that cannot be pickled
            self.counts["start_failures"] += 1
            log.error("a worker process could not start, trying again in %.0f s: %s", RESPAWN_PAUSE_S, err)
            for c in (conn, child_conn, alive_r, alive_w):
                c.close()
            self.loop.call_later(RESPAWN_PAUSE_S, self.spawn)
            return
        child_conn.close()  # the worker's ends are the worker's alone: its exit then reads as EOF here
        alive_r.close()
        w = Worker(process, conn, alive_w)
        self.workers.append(w)
        self.loop.add_reader(conn.fileno(), self.readable, w)
        self.loop.add_reader(process.sentinel, self.exited, w)
        self.idle.append(w)
        self.pump()

    async def close(self) -> None:
        """Ends every worker: idle ones exit when their pipes close; any still running after CLOSE_WAIT_S is killed."""
        self.closed = True
        for t in self.queue:
            if not t.future.done():
                t.future.set_exception(WorkerExit("peer is stopping"))
        self.queue.clear()
        for w in list(self.workers):
            w.retired = True
            self.unwatch(w, sentinel=False)
            w.conn.close()
            w.alive.close()
        end = self.loop.time() + CLOSE_WAIT_S
        while any(w.process.is_alive() for w in self.workers) and self.loop.time() < end:
            await asyncio.sleep(0.01)
        for w in list(self.workers):
            if w.process.is_alive():
                w.process.kill()
            w.process.join(CLOSE_WAIT_S)
            self.unwatch(w, conn=False)
            self.fail(w, WorkerExit("peer is stopping"))
            try:
                w.process.close()
            except ValueError:
                pass
        self.workers.clear()

    # Calls.

    def run(self, index: int, args: Any, deadline: float | None) -> asyncio.Future:
        """Runs function `index` on `args` in a worker; `deadline` (loop time, s) bounds its wait and its run."""
        future = self.loop.create_future()
        if self.closed:
            future.set_exception(WorkerExit("peer is stopping"))
            return future
        self.queue.append(Task(self.next_id, index, args, deadline, future))
        self.next_id += 1
        self.pump()
        return future

    def places(self, max_queue: int, max_queue_ms: int) -> int:
        if self.task_ms is None or self.task_ms <= 0:
            return self.size + max_queue
        return self.size + min(max_queue, max(self.size, int(max_queue_ms * self.size / self.task_ms)))

    @property
    def load(self) -> int:
        """Calls running or waiting."""
        return len(self.queue) + sum(1 for w in self.workers if w.task is not None)

    def pump(self) -> None:
        now = self.loop.time()
        while self.idle and self.queue:
            t = self.queue.popleft()
            if t.future.done():
                continue  # cancelled while it waited
            if t.deadline is not None and now >= t.deadline:
                self.counts["expired"] += 1
                t.future.set_exception(Expired("deadline passed while queued"))
                continue
            w = self.idle.pop()
            try:
                w.conn.send((t.id, t.index, t.args))
            except Exception as err:  # noqa: BLE001 - args pickle cannot carry, or the worker just died
                if isinstance(err, (OSError, EOFError)):
                    self.queue.appendleft(t)  # its exit is on its way: the call waits for another worker
                    continue
                t.future.set_exception(WorkerExit(f"args could not be sent to a worker: {err}"))
                self.idle.append(w)
                continue
            w.task, t.began = t, now
            if t.deadline is not None:
                w.timer = self.loop.call_at(t.deadline + self.grace_ms / 1000, self.overdue, w, t)
        # Waiting calls past their deadlines go now, not when a worker frees (they hold places).
        while self.queue and self.queue[0].deadline is not None and now >= self.queue[0].deadline:
            t = self.queue.popleft()
            if not t.future.done():
                self.counts["expired"] += 1
                t.future.set_exception(Expired("deadline passed while queued"))

    def cancel(self, future: asyncio.Future) -> None:
        """A call its client cancelled: one waiting is dropped; a running one finishes, unanswered (its worker is not stopped for it)."""
        if not future.done():
            future.cancel()

    # What the workers say.

    def readable(self, w: Worker) -> None:
        try:
            while w.conn.poll():
                task_id, ok, value = w.conn.recv()
                self.done(w, task_id, ok, value)
        except (EOFError, OSError):
            self.unwatch(w, sentinel=False)  # its exit follows on the sentinel
        except Exception as err:  # noqa: BLE001 - a result that does not unpickle here
            t = w.task
            w.task = None
            if t is not None and not t.future.done():
                t.future.set_exception(WorkerExit(f"result could not be read from the worker: {err}"))
            self.free(w)

    def done(self, w: Worker, task_id: int, ok: bool, value: Any) -> None:
        t = w.task
        if t is None or t.id != task_id:
            return
        w.task = None
        if w.timer is not None:
            w.timer.cancel()
            w.timer = None
        ms = (self.loop.time() - t.began) * 1000
        self.task_ms = ms if self.task_ms is None else self.task_ms + TASK_MS_WEIGHT * (ms - self.task_ms)
        self.counts["ran"] += 1
        if not t.future.done():
            if ok:
                t.future.set_result(value)
            else:
                err = RemoteFailure(value[0])
                err.code = value[1]
                t.future.set_exception(err)
        self.free(w)

    def free(self, w: Worker) -> None:
        if not w.retired and w in self.workers:
            self.idle.append(w)
        self.pump()

    def overdue(self, w: Worker, t: Task) -> None:
        """`t` runs ABANDON_GRACE_MS past its deadline: its worker is killed and replaced."""
        w.timer = None
        if w.task is not t or w.retired:
            return
        self.counts["abandoned"] += 1
        log.warning("a call ran %d ms past its deadline: its worker (pid %s) is killed and replaced", self.grace_ms, w.process.pid)
        self.retire(w)
        self.counts["replaced"] += 1
        self.fail(w, Expired("deadline passed while running"))
        self.spawn()

    def exited(self, w: Worker) -> None:
        """A worker's process ended: reaped; unless on purpose, its call fails and it is replaced."""
        self.unwatch(w)
        # The sentinel closes as the process exits, a moment before it can be reaped: join
        # waits that moment (bounded), so its exit code is known.
        w.process.join(REAP_WAIT_S)
        code, pid = w.process.exitcode, w.process.pid
        try:
            w.process.close()
        except ValueError:
            pass  # still running (cannot be: its sentinel said it ended)
        if w in self.workers:
            self.workers.remove(w)
        if w in self.idle:
            self.idle.remove(w)
        if w.retired or self.closed:
            return
        self.counts["crashed"] += 1
        self.counts["replaced"] += 1
        why = f"worker (pid {pid}) exited with code {code}"
        log.error("%s%s: replaced", why, "" if w.task is None else " while running a call")
        self.fail(w, WorkerExit(why))
        self.spawn()

    def retire(self, w: Worker) -> None:
        w.retired = True
        self.unwatch(w, sentinel=False)
        if w in self.idle:
            self.idle.remove(w)
        if w in self.workers:
            self.workers.remove(w)
        try:
            w.process.kill()
        except Exception:  # noqa: BLE001 - gone already
            pass
        w.conn.close()
        w.alive.close()

    def fail(self, w: Worker, err: Exception) -> None:
        t, w.task = w.task, None
        if w.timer is not None:
            w.timer.cancel()
            w.timer = None
        if t is not None and not t.future.done():
            t.future.set_exception(err)

    def unwatch(self, w: Worker, *, conn: bool = True, sentinel: bool = True) -> None:
        if self.loop is None:
            return
        if conn:
            try:
                self.loop.remove_reader(w.conn.fileno())
            except (OSError, ValueError):
                pass  # closed already
        if sentinel:
            try:
                self.loop.remove_reader(w.process.sentinel)
            except (OSError, ValueError):
                pass


class RemoteFailure(Exception):
    """A handler's exception, as the worker reported it: its message, and its code."""

    code: str | None = None
