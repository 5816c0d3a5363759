"""A raw pyzmq ROUTER echo doing the MessagePack work a peer does, and nothing else: the
baseline of bench/work/python.js. Each message is one frame of [id 4][length 4][body] entries
(bin/bench/harness.js rawClientNonBlocking with msgpack), every body decoded and encoded again
before the frame goes back. Prints its endpoint; SIGTERM ends it."""
import signal
import struct
import sys

import msgpack
import zmq


def reencode(frame: bytes) -> bytes:
    out = []
    at = 0
    while at + 8 <= len(frame):
        rid, length = struct.unpack_from("<II", frame, at)
        body = msgpack.packb(msgpack.unpackb(frame[at + 8:at + 8 + length], raw=False), use_bin_type=True)
        out.append(struct.pack("<II", rid, len(body)) + body)
        at += 8 + length
    return b"".join(out)


ctx = zmq.Context()
s = ctx.socket(zmq.ROUTER)
s.setsockopt(zmq.LINGER, 0)
s.setsockopt(zmq.SNDHWM, 100000)
s.setsockopt(zmq.RCVHWM, 100000)
port = s.bind_to_random_port("tcp://127.0.0.1")
print(f"tcp://127.0.0.1:{port}", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    cid, frame = s.recv_multipart()
    s.send_multipart([cid, reencode(frame)])
