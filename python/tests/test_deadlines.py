"""Deadlines and bounds as the Node peer has them: a call past its deadline (plus 50 ms) stops
holding its worker (the worker is replaced) or its coroutine (cancelled); a function in a
thread cannot be stopped and is counted; calls wait for workers only up to max_queue (and
max_queue_ms of measured work), then new ones are answered BUSY; the workers are the capacity
the peer states. In one process over raw sockets, and against Node clients of this commit."""
import asyncio
import subprocess
import time

import zmq
import zmq.asyncio

import handlers_sample
from conftest import NODE, ROOT, eventually
from zeromesh import codec
from zeromesh.constants import MessageType, Status
from zeromesh.peer import Peer


def dealer(ctx, ep):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(ep)
    return s


async def replies(s, n, timeout=5.0):
    out = []
    while len(out) < n:
        m = codec.decode(await asyncio.wait_for(s.recv(), timeout))
        if m["type"] == MessageType.REPLY:
            out += m["replies"]
    return out


async def until(cond, timeout=10.0):
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        if asyncio.get_running_loop().time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def test_a_call_past_its_deadline_has_its_worker_replaced_and_the_next_call_runs(tmp_path):
    async def main():
        peer = Peer(handlers=handlers_sample, workers=1)
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = dealer(ctx, ep)
        try:
            await s.send(codec.encode_request([[1, "whoami", None, 5000]]))
            [first] = await replies(s, 1)
            await s.send(codec.encode_request([[2, "hang", {"seconds": 30}, 300], [3, "whoami", None, 5000]]))
            # The hang gets no answer (its client has its own timeout); the call behind it runs on a new worker.
            [r] = await replies(s, 1, timeout=5)
            assert r["id"] == 3 and r["status"] == Status.OK
            assert r["value"]["pid"] != first["value"]["pid"]
            assert peer.pool.counts["abandoned"] == 1 and peer.pool.counts["replaced"] == 1
            assert peer.stats()["expired"] == 1 and peer.inflight == 0
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_calls_wait_for_a_worker_up_to_max_queue_then_are_answered_busy(tmp_path):
    async def main():
        peer = Peer(handlers=handlers_sample, workers=1, max_queue=2)
        assert peer.descriptor["capacity"] == 1  # the workers are the capacity it states
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = dealer(ctx, ep)
        mark = tmp_path / "hanging"
        try:
            await s.send(codec.encode_request([[1, "hang", {"seconds": 1, "mark": str(mark)}, 5000]]))
            await until(mark.exists)
            await s.send(codec.encode_request([[2, "whoami", None, 5000], [3, "whoami", None, 5000], [4, "whoami", None, 5000]]))
            got = {r["id"]: r["status"] for r in await replies(s, 4)}
            assert got == {1: Status.OK, 2: Status.OK, 3: Status.OK, 4: Status.BUSY}
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_max_queue_ms_bounds_the_queue_by_the_measured_time_per_call():
    async def main():
        peer = Peer(handlers=handlers_sample, workers=1, max_queue=64, max_queue_ms=100)
        await peer.start()
        try:
            assert peer.pool.places(64, 100) == 1 + 64  # none measured yet: the whole queue
            peer.pool.task_ms = 25.0  # as if calls took 25 ms: 100 ms of work is 4 of them
            assert peer.pool.places(64, 100) == 1 + 4
            peer.pool.task_ms = 500.0  # never fewer than one waiting per worker
            assert peer.pool.places(64, 100) == 1 + 1
        finally:
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_coroutine_past_its_deadline_is_cancelled_and_a_thread_is_counted():
    cancelled = []

    async def stuck(args):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(args)
            raise

    def blocking(args):
        time.sleep(args)
        return args

    async def main():
        peer = Peer(handlers={"stuck": stuck, "blocking": blocking})
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = dealer(ctx, ep)
        try:
            await s.send(codec.encode_request([[1, "stuck", "a", 100], [2, "blocking", 0.5, 100]]))
            await until(lambda: cancelled == ["a"])
            await until(lambda: peer.stats()["overran"] == 1)
            assert peer.stats()["expired"] == 1
            await until(lambda: peer.inflight == 0)  # the thread's call held its place until it returned
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_max_queue_needs_workers():
    import pytest
    from zeromesh.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="need workers"):
        Peer(handlers=handlers_sample, max_queue=4)


def test_two_hung_calls_do_not_fail_other_callers_calls(procs, tmp_path):
    """The new user's case: two Python peers with one worker each, two calls that hang 8 s with a
    2 s deadline; a Node client's ordinary calls meanwhile all succeed (before: they failed, "got
    no reply within 5000 ms", while the hung calls held both workers)."""
    _, a = procs.python_peer("--workers", "1")
    _, b = procs.python_peer("--workers", "1")
    hung = []
    for i, peer in enumerate((a, b)):  # one on each peer's only worker (the two peers do not know each other)
        mark = tmp_path / f"hang{i}"
        hung.append((mark, procs.start([NODE, str(ROOT / "bin" / "zeromesh.js"), "request", "--seeds", peer, "hang",
                                        f'{{"seconds": 8, "mark": "{mark}"}}', "--timeout", "2000", "--no-idempotent"])))
    for mark, _ in hung:
        eventually(lambda mark=mark: mark.exists() or (_ for _ in ()).throw(AssertionError("a hang did not begin")), timeout=15)
    c = procs.node_client([a, b], peers=2, method="whoami", seconds=4, concurrency=4)
    assert procs.line(c, 15) == "ready"
    out = procs.result(c)
    assert out["failed"] == {}, out
    assert out["ok"] > 20
    for _, p in hung:
        assert p.wait(timeout=15) == 1
        assert "ERR_ZEROMESH_TIMEOUT" in p.stderr.read()
    # The peers answer as before, on new workers.
    r = subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "request", "--seeds", a, "whoami"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
