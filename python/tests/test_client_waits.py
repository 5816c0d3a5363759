"""The Python client's call waits on events, not on a polling loop: a call made before any peer
is up is woken by the peer's service answer, and a call refused BUSY by the end of a call of
its own at that peer, with no sleep in the request path (before: it slept 20 ms steps while
no peer served it, and 50 ms after each BUSY). Its failover decisions are failover.decide's,
tested by the table both clients read (test_failover_table.py)."""
import asyncio
import socket
import sys

from zeromesh.client import Client
from zeromesh.errors import ClosedError, InvalidArgumentError, ZeromeshTimeoutError
from zeromesh.peer import Peer


def spy_sleeps(monkeypatch):
    """The sleeps asked for by Client.request itself (not by its heartbeats or by zmq)."""
    seen = []
    real = asyncio.sleep

    async def sleep(delay, *a, **k):
        if sys._getframe(1).f_code.co_name == "request":
            seen.append(delay)
        return await real(delay, *a, **k)
    monkeypatch.setattr(asyncio, "sleep", sleep)
    return seen


def free_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


async def echo(args):
    return args


def test_a_call_before_any_peer_is_woken_by_the_peer_not_by_polling(monkeypatch):
    sleeps = spy_sleeps(monkeypatch)

    async def main():
        ep = free_endpoint()
        client = Client([ep], timeout=10000)
        peer = Peer(bind=ep, handlers={"echo": echo})
        try:
            call = asyncio.ensure_future(client.request("echo", 7))
            for _ in range(500):  # until the call waits for a peer (bounded)
                if client.waiting == 1:
                    break
                await asyncio.sleep(0.01)
            assert client.waiting == 1 and not call.done()
            await peer.start()
            assert await asyncio.wait_for(call, 10) == 7
        finally:
            await client.close()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))
    assert sleeps == []


def test_a_call_refused_busy_waits_for_a_place_not_a_timer(monkeypatch):
    sleeps = spy_sleeps(monkeypatch)

    async def slow(args):
        await asyncio.sleep(0.3)
        return args

    async def main():
        peer = Peer(handlers={"slow": slow}, max_inflight=1)
        ep = await peer.start()
        client = Client([ep], timeout=10000)
        try:
            got = await asyncio.wait_for(asyncio.gather(client.request("slow", 1), client.request("slow", 2)), 10)
            assert sorted(got) == [1, 2]
            assert peer.stats()["busy"] >= 1  # the second was refused and waited for the first to end
        finally:
            await client.close()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))
    assert sleeps == []


def test_wait_for_resolves_when_a_peer_serving_the_method_comes_up_and_times_out_otherwise():
    async def main():
        ep = free_endpoint()
        client = Client([ep], timeout=10000)
        peer = Peer(bind=ep, handlers={"echo": echo})
        try:
            parked = asyncio.Event()  # set when wait_for parks on the peers' changes
            changes = client.changes

            def park(*a, **k):
                parked.set()
                return changes(*a, **k)
            client.changes = park
            waiting = asyncio.ensure_future(client.wait_for("echo", timeout=10000))
            await asyncio.wait_for(parked.wait(), 5)
            assert client.waiting == 1 and not waiting.done()
            await peer.start()
            assert await asyncio.wait_for(waiting, 10) == [ep]
            try:  # nobody serves it: the timeout, with what it saw
                await client.wait_for("nobody", timeout=200)
                raise AssertionError("wait_for resolved for a method nobody serves")
            except ZeromeshTimeoutError as err:
                assert '0 of 1 peers serving "nobody"' in str(err)
            try:
                await client.wait_for("echo", count=0)
                raise AssertionError("count=0 was taken")
            except InvalidArgumentError:
                pass
        finally:
            await client.close()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_close_wakes_a_wait_for_and_a_call_waiting_for_a_peer_at_once():
    async def main():
        client = Client([free_endpoint()], timeout=30000)
        both = asyncio.Event()  # set once both have parked on the peers' changes
        changes = client.changes

        def park(*a, **k):
            if client.waiting >= 1:
                both.set()
            return changes(*a, **k)
        client.changes = park
        waiting = asyncio.ensure_future(client.wait_for("echo"))
        call = asyncio.ensure_future(client.request("echo", 1))
        await asyncio.wait_for(both.wait(), 5)
        await client.close()
        for f in (waiting, call):
            try:
                await asyncio.wait_for(f, 2)  # at once, not at their 30 s timeout
                raise AssertionError("resolved after close")
            except ClosedError:
                pass
    asyncio.run(asyncio.wait_for(main(), 30))
