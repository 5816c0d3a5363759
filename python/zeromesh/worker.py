"""A pool worker process (worker_pool.py starts it with multiprocessing's spawn, so it holds no
descriptor of its peer's: not the bound socket, not another worker's pipes). It dies with its
peer however the peer dies: on Linux the kernel sends it SIGKILL when its parent goes
(prctl PR_SET_PDEATHSIG); everywhere, a thread watches a pipe whose other end only the peer
holds and ends the process when it closes, even while a handler runs. It ignores SIGINT: a
Ctrl-C reaches the whole process group, and the peer drains its work rather than lose it.

It runs one call at a time: (task, function index, args) in, (task, ok, value or
[message, code]) out. Only the standard library is imported here."""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL from the kernel when the parent exits (Linux), then a check that it has not
    exited already, before prctl took effect."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: the watching thread below still ends the process
    if os.getppid() != parent_pid:
        os._exit(1)


def watch(alive: Any) -> None:
    """Ends the process once `alive`'s other end is closed (its peer exited or closed the pool)."""
    def run() -> None:
        try:
            alive.recv()
        except (EOFError, OSError):
            pass
        os._exit(1)

    threading.Thread(target=run, name="zeromesh-parent-watch", daemon=True).start()


def failure(err: BaseException) -> list:
    """A handler's exception as a REMOTE value (PROTOCOL.md 4.2): its message, and its `code` when that is a string."""
    code = getattr(err, "code", None)
    return [str(err) or type(err).__name__, code if isinstance(code, str) else None]


def main(conn: Any, alive: Any, parent_pid: int, functions: list[Callable]) -> None:
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch(alive)
    while True:
        try:
            task, index, args = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        try:
            out = (task, True, functions[index](args))
        except BaseException as err:  # noqa: BLE001 - a handler's failure is its caller's answer
            out = (task, False, failure(err))
        try:
            conn.send(out)
        except (EOFError, OSError, BrokenPipeError):
            os._exit(0)
        except Exception as err:  # a result pickle cannot carry
            conn.send((task, False, [f"result could not be sent from the worker: {err}", "ERR_ZEROMESH_ENCODE"]))
