"""The peer's request path in one process, over a raw socket: a coroutine handler that waits is
carried on by the loop and answered; one cancelled by its client gets no answer and frees its
place; a duplicate is answered from memory; a refusal is not remembered."""
import asyncio

import zmq
import zmq.asyncio

from zeromesh import codec
from zeromesh.constants import MessageType, Status
from zeromesh.peer import Peer


def dealer(ctx, ep):
    """A raw DEALER connected to `ep`, closed without lingering."""
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(ep)
    return s


async def replies(s, n, timeout=3.0):
    out = []
    while len(out) < n:
        m = codec.decode(await asyncio.wait_for(s.recv(), timeout))
        if m["type"] == MessageType.REPLY:
            out += m["replies"]
    return out


def test_waiting_handlers_cancels_duplicates_and_refusals():
    cancelled = []

    async def slow(args):
        try:
            await asyncio.sleep(args)
        except asyncio.CancelledError:
            cancelled.append(args)
            raise
        return args

    async def main():
        peer = Peer(handlers={"slow": slow}, max_inflight=1)
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = dealer(ctx, ep)
        try:
            await s.send(codec.encode_request([[2, "slow", 5, 5000]]))  # holds the one place
            for _ in range(100):
                if peer.inflight == 1:
                    break
                await asyncio.sleep(0.01)
            await s.send(codec.encode_request([[3, "slow", 0.01, 1000]]))  # no place: busy, not remembered
            assert [(r["id"], r["status"]) for r in await replies(s, 1)] == [(3, Status.BUSY)]
            await s.send(codec.encode_cancel([2]))
            for _ in range(100):
                if peer.inflight == 0:
                    break
                await asyncio.sleep(0.01)
            assert cancelled == [5] and peer.inflight == 0
            await s.send(codec.encode_request([[3, "slow", 0.01, 1000]]))  # the same id again: served now
            assert [(r["id"], r["status"]) for r in await replies(s, 1)] == [(3, Status.OK)]
            await s.send(codec.encode_request([[1, "slow", 0.05, 1000]]))  # a handler that waits, carried on by the loop
            assert [(r["id"], r["status"], r["value"]) for r in await replies(s, 1)] == [(1, Status.OK, 0.05)]
            await s.send(codec.encode_request([[1, "slow", 9, 1000]]))  # a duplicate of a finished one: the same reply
            assert [(r["id"], r["value"]) for r in await replies(s, 1)] == [(1, 0.05)]
            assert peer.stats()["duplicates"] == 1 and peer.stats()["cancelled"] == 1
        finally:
            s.close()
            ctx.term()
            await peer.stop()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_modules_subscription_functions_are_not_methods_too():
    import handlers_sample
    from zeromesh.peer import handlers_of

    methods = handlers_of(handlers_sample)
    assert "placed" not in methods and "dropped" not in methods  # they are events' handlers
    assert {"whoami", "spin", "boom", "echo"} <= set(methods)


def test_a_question_is_told_how_many_clients_the_peer_holds():
    """`cc` in the PONG to a question (PROTOCOL.md 4.4), as a Node peer says it: the client
    connections heard from in the last 3 s, the asker included; a heartbeat (seq 0) is not told."""
    async def main():
        peer = Peer(handlers={"echo": echo})
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        socks = []
        try:
            socks += [dealer(ctx, ep) for _ in range(3)]
            for i, s in enumerate(socks[:2]):
                await s.send(codec.encode_request([[1, "echo", i, 1000]]))
                await replies(s, 1)

            async def pong(s, seq):
                await s.send(codec.encode_ping(seq))
                while True:
                    m = codec.decode(await asyncio.wait_for(s.recv(), 3))
                    if m["type"] == MessageType.PONG and m["seq"] == seq:
                        return m["meta"]
            assert (await pong(socks[2], 1))["cc"] == 3
            assert "cc" not in await pong(socks[2], 0)
        finally:
            for s in socks:
                s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(main())


async def echo(args):
    return args


def test_the_reject_vectors_a_peer_receives_are_answered_or_dropped_as_they_say():
    """protocol/vectors.json says, for each reject vector, who receives it and what follows: a
    peer answers ERROR with the vector's code to those that have one, nothing to the others,
    and counts every one as malformed."""
    import json
    from pathlib import Path

    vectors = json.loads((Path(__file__).resolve().parents[2] / "protocol" / "vectors.json").read_text())["vectors"]
    mine = [v for v in vectors if v["message"]["kind"] == "reject" and v["message"]["receiver"] == "peer"]
    assert len(mine) >= 9

    async def main():
        peer = Peer(handlers={"echo": echo}, events={"cache.drop": echo})
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = dealer(ctx, ep)
        try:
            before = peer.counts["malformed"]
            for v in mine:
                await s.send(bytes.fromhex(v["hex"].replace(" ", "")))
            await s.send(codec.encode_ping(77))
            errors = []
            while True:
                m = codec.decode(await asyncio.wait_for(s.recv(), 3))
                if m["type"] == MessageType.ERROR:
                    errors.append(m["code"])
                if m["type"] == MessageType.PONG and m["seq"] == 77:
                    break
            assert errors == [v["message"]["errorCode"] for v in mine if "errorCode" in v["message"]]
            assert peer.counts["malformed"] - before == len(mine)
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(main())


def test_the_entries_one_turn_answers_leave_in_one_frame_and_a_bad_result_alone():
    """Replies are batched per connection (the Node peer's outbox): three requests in one frame
    are answered in one REPLY frame; a result msgpack cannot encode becomes an error entry of
    its own, the others still answered; a duplicate gets the same entry again."""
    async def bad(args):
        return {1, 2}  # a set: not MessagePack

    async def main():
        peer = Peer(handlers={"echo": echo, "bad": bad})
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = dealer(ctx, ep)
        try:
            await s.send(codec.encode_request([[1, "echo", "a", 1000], [2, "echo", "b", 1000], [3, "echo", "c", 1000]]))
            m = codec.decode(await asyncio.wait_for(s.recv(), 3))
            assert [(r["id"], r["value"]) for r in m["replies"]] == [(1, "a"), (2, "b"), (3, "c")]  # one frame
            await s.send(codec.encode_request([[4, "echo", "d", 1000], [5, "bad", None, 1000], [6, "echo", "f", 1000]]))
            got = {r["id"]: r for r in await replies(s, 3)}
            assert got[4]["value"] == "d" and got[6]["value"] == "f"
            assert got[5]["status"] == Status.REMOTE and got[5]["value"][1] == "ERR_ZEROMESH_ENCODE"
            await s.send(codec.encode_request([[2, "echo", "changed", 1000]]))  # a duplicate of a finished one
            assert [(r["id"], r["value"]) for r in await replies(s, 1)] == [(2, "b")]
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))
