"""The pool workers of `python -m zeromesh peer --workers N`, as real processes: they die with
their peer however it dies, and never hold its socket, so a restart binds at once."""
import os
import signal
import time

import zmq

from conftest import eventually
from zeromesh import codec
from zeromesh.constants import MessageType


def children_of(pid: int) -> set[int]:
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry))
    return out


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie nobody reaped yet is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def ask(ep: str, entries: list, n: int, timeout: float = 10.0) -> list[dict]:
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(ep)
    try:
        s.send(codec.encode_request(entries))
        out = []
        end = time.monotonic() + timeout
        while len(out) < n:
            if not s.poll(max(1, int((end - time.monotonic()) * 1000))):
                raise TimeoutError(f"{n - len(out)} replies missing")
            m = codec.decode(s.recv())
            if m["type"] == MessageType.REPLY:
                out += m["replies"]
        return out
    finally:
        s.close()
        ctx.term()


def bindable(ep: str) -> bool:
    ctx = zmq.Context()
    s = ctx.socket(zmq.ROUTER)
    s.setsockopt(zmq.LINGER, 0)
    try:
        s.bind(ep)
        return True
    except zmq.ZMQError:
        return False
    finally:
        s.close()
        ctx.term()


def test_a_sigkilled_peer_leaves_no_worker_and_its_port_binds_at_once(procs, tmp_path):
    p, ep = procs.python_peer("--workers", "1")
    [r] = ask(ep, [[1, "whoami", None, 5000]], 1)
    worker = r["value"]["pid"]
    assert worker != p.pid and worker in children_of(p.pid)
    kids = children_of(p.pid)
    # The worker busy in a call that hangs, the way a stuck handler would be when the peer dies.
    s_ctx = zmq.Context()
    s = s_ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(ep)
    mark = tmp_path / "hanging"
    s.send(codec.encode_request([[2, "hang", {"seconds": 60, "mark": str(mark)}, 60000]]))
    try:
        eventually(lambda: mark.exists() or (_ for _ in ()).throw(AssertionError("the hang did not begin")), timeout=10)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=5)
        killed_at = time.monotonic()
        eventually(lambda: [k for k in kids if running(k)] == [] or (_ for _ in ()).throw(AssertionError(f"left alive: {[k for k in kids if running(k)]}")), timeout=1.0, interval=0.02)
        eventually(lambda: bindable(ep) or (_ for _ in ()).throw(AssertionError(f"{ep} still held")), timeout=1.0, interval=0.02)
        assert time.monotonic() - killed_at < 1.5
    finally:
        s.close()
        s_ctx.term()
        for k in kids:
            if running(k):
                os.kill(k, signal.SIGKILL)


def test_a_bind_that_fails_says_zeromesh_once(procs):
    _, ep = procs.python_peer()
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "zeromesh", "peer", "--bind", ep], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert r.stderr.count("zeromesh:") == 1, r.stderr
    assert "cannot bind" in r.stderr


def test_a_subscription_runs_in_a_worker_and_its_error_is_acked_as_remote():
    """An event's handler that is a plain function runs in a worker process, as a method does:
    acked OK, or REMOTE with the handler's code; a worker's pid is not the peer's."""
    import asyncio

    import zmq.asyncio

    import handlers_sample
    from zeromesh.constants import Status
    from zeromesh.peer import Peer

    async def main():
        peer = Peer(handlers=handlers_sample, workers=1)
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)
        try:
            # [id, event, payload, timeoutMs, group, ack]
            await s.send(codec.encode_event([[1, "orders.placed", {"id": 1}, 5000, "python-billing", True], [2, "orders.placed", {"bad": True}, 5000, "python-billing", True]]))
            got = {}
            while len(got) < 2:
                m = codec.decode(await asyncio.wait_for(s.recv(), 10))
                if m["type"] == MessageType.REPLY:
                    got.update({r["id"]: r for r in m["replies"]})
            assert got[1]["status"] == Status.OK and got[1]["value"] is None
            assert got[2]["status"] == Status.REMOTE and got[2]["value"][1] == "E_BILL"
            assert peer.pool.counts["ran"] == 2
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_worker_that_dies_fails_its_call_with_worker_exit_and_is_replaced():
    import asyncio

    import zmq.asyncio

    import handlers_sample
    from zeromesh.constants import Status
    from zeromesh.peer import Peer

    async def main():
        peer = Peer(handlers=handlers_sample, workers=1)
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)

        async def one(entries):
            await s.send(codec.encode_request(entries))
            while True:
                m = codec.decode(await asyncio.wait_for(s.recv(), 10))
                if m["type"] == MessageType.REPLY:
                    return m["replies"]
        try:
            [before] = await one([[1, "whoami", None, 5000]])
            [died] = await one([[2, "die", None, 5000]])
            assert died["status"] == Status.REMOTE and died["value"][1] == "ERR_ZEROMESH_WORKER_EXIT"
            assert "exited with code 3" in died["value"][0]
            [after] = await one([[3, "whoami", None, 5000]])
            assert after["status"] == Status.OK and after["value"]["pid"] != before["value"]["pid"]
            assert peer.pool.counts["crashed"] == 1 and peer.pool.counts["replaced"] == 1
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))
