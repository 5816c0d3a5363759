"""One request in flight from a Python DEALER, alternately against a Python peer's echo (zeromesh
REQUEST frames) and the raw pyzmq echo (raw_echo.py, [id][len][body] entries), in one run: the
Python side alone, without the Node client (bench/RESULTS.md, "Python peers", round two).
Usage: python python/bench/round_trip.py [ROUNDS] (the package installed)."""
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import zmq

from zeromesh import codec

HERE = Path(__file__).resolve().parent
PY = sys.executable
payload = {"hello": "world", "n": 42, "list": [1, 2, 3]}

def start(argv, env=None):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    return p, p.stdout.readline().strip()

def run(ep, raw, seconds):
    ctx = zmq.Context(); s = ctx.socket(zmq.DEALER); s.setsockopt(zmq.LINGER, 0); s.connect(ep)
    n = 0; end = time.monotonic() + seconds; rid = 0
    while time.monotonic() < end:
        rid += 1
        if raw:
            body = msgpack.packb(payload); s.send(struct.pack("<II", rid, len(body)) + body); f = s.recv()
            msgpack.unpackb(f[8:])
        else:
            s.send(codec.encode_request([[rid, "echo", payload, 5000]])); codec.decode(s.recv())
        n += 1
    s.close(); ctx.term()
    return n / seconds

peer, pep = start([PY, "-m", "zeromesh", "peer", "--handlers", "handlers_sample", "--log-level", "error"], {"PYTHONPATH": str(HERE.parent / "tests")})
raw, rep = start([PY, str(HERE / "raw_echo.py")])
try:
    run(pep, False, 0.5); run(rep, True, 0.5)
    a, b = [], []
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        a.append(run(pep, False, 2)); b.append(run(rep, True, 2))
    ratios = sorted(x / y for x, y in zip(a, b))
    print("peer", [round(x) for x in a], "raw", [round(x) for x in b], "median ratio %.2f" % ratios[len(ratios) // 2])
finally:
    peer.kill(); raw.kill(); peer.wait(); raw.wait()
