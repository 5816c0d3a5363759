"""Where a Python peer's time per request goes (bench/RESULTS.md, "Python peers"): each stage of
one echo request on its own, timed with timeit in one process (no sockets unless named):
the codec (decode a REQUEST frame, encode a REPLY), the intake (duplicates, admission, the
coroutine run at once, the reply queued) with the reply frame encoded, the raw echo's own work
(msgpack unpack and pack of the body, what python/bench/raw_echo.py does), a pyzmq DEALER to
ROUTER round trip over inproc (send_multipart and recv_multipart each way), ZMQ_EVENTS read
once, a zmq.Again raised by a read on an empty socket, and one asyncio loop turn (call_soon
and its run). Microseconds per operation, the median of 5 runs.
Usage: python python/bench/accounting.py (the package installed)."""
import asyncio
import statistics
import timeit

import msgpack
import zmq

from zeromesh import codec
from zeromesh.peer import Peer

PAYLOAD = {"hello": "world", "n": 42, "list": [1, 2, 3]}
N = 20000


def us(fn, n=N):
    return statistics.median(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


async def echo(args):
    return args


def main():
    out = {}
    frame = codec.encode_request([[1, "echo", PAYLOAD, 5000]])
    out["decode REQUEST frame"] = us(lambda: codec.decode(frame))
    meta = {"mv": 123456789, "load": 0}
    out["encode REPLY frame"] = us(lambda: codec.encode_reply(meta, [[1, 0, PAYLOAD]]))
    body = msgpack.packb(PAYLOAD)
    out["raw echo's work: unpack + pack the body"] = us(lambda: msgpack.packb(msgpack.unpackb(body, raw=False), use_bin_type=True))

    async def intake():
        peer = Peer(handlers={"echo": echo})
        msg = codec.decode(frame)
        cid = b"client"
        ids = iter(range(1, 10**9))

        def one():
            msg["requests"][0]["id"] = next(ids)
            peer.intake.requests(cid, msg)
            boxes, peer.outbox = peer.outbox, {}
            for entries in boxes.values():
                codec.encode_reply(meta, entries)
        peer.flushing_soon = True  # no flush scheduled: one() takes the queued entries itself
        return us(one)
    out["intake + run + reply encoded (no socket)"] = asyncio.run(intake())

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.bind("inproc://acct")
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.ROUTING_ID, b"d")
    dealer.connect("inproc://acct")

    def round_trip():
        dealer.send(frame)
        cid, f = router.recv_multipart()
        router.send_multipart([cid, f])
        dealer.recv()
    out["pyzmq round trip, inproc (2 sends, 2 receives)"] = us(round_trip, 5000)
    out["ZMQ_EVENTS read"] = us(lambda: router.getsockopt(zmq.EVENTS))

    def again():
        try:
            router.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            pass
    out["a read that raises zmq.Again"] = us(again)
    for s in (router, dealer):
        s.close(linger=0)
    ctx.term()

    async def turns():
        loop = asyncio.get_running_loop()
        n = 20000
        done = loop.create_future()
        left = [n]

        def cb():
            left[0] -= 1
            if left[0] == 0:
                done.set_result(None)
            else:
                loop.call_soon(cb)
        t = loop.time()
        loop.call_soon(cb)
        await done
        return (loop.time() - t) / n * 1e6
    out["asyncio loop turn (call_soon, run)"] = statistics.median(asyncio.run(turns()) for _ in range(5))
    for k, v in out.items():
        print(f"| {k} | {v:.2f} |")


if __name__ == "__main__":
    main()
