"""A mixed mesh, against the Node code of the same commit: Python peers join Node peers, Node
clients reach them and fail over around them as around Node peers."""
import json
import signal

import zmq

from conftest import eventually
from zeromesh import codec


def deep(n):
    v = 1
    for _ in range(n):
        v = [v]
    return v


def alive(procs, seed):
    return {m["endpoint"] for m in json.loads(procs.zeromesh("members", "--seeds", seed, "--json")) if m["state"] == "alive"}


def loaded_python_peer(procs, seed):
    """A Python peer joined through `seed`, with its --http endpoint (its metrics say when it is under load)."""
    p, py = procs.python_peer("--seeds", seed, "--http", "127.0.0.1:0", "--log-format", "json", "--log-level", "info")
    return p, py, "http://" + procs.log(p, lambda line: "http" in line)["http"]


def test_python_peers_join_a_node_mesh_and_serve_node_clients(procs):
    _, a = procs.node_peer()
    _, b = procs.node_peer("--seeds", a)
    _, py = procs.python_peer("--seeds", a)
    port = a.rsplit(":", 1)[1]
    _, py2 = procs.python_peer("--seeds", f"dns://localhost:{port}")  # a DNS seed, as in Kubernetes
    everyone = {a, b, py, py2}
    # Every member sees every other alive, the Node peers the Python ones too.
    for seed in (a, b, py, py2):
        eventually(lambda seed=seed: alive(procs, seed) == everyone or (_ for _ in ()).throw(AssertionError(alive(procs, seed))))
    # A Node client that knows only a Node seed learns the Python peers and reaches all four.
    c = procs.node_client([a], peers=4, method="echo", args='{"n": 1}', seconds=1)
    assert procs.line(c) == "ready"
    out = procs.result(c)
    assert out["failed"] == {}
    assert out["ok"] > 100
    assert out["byEndpoint"] == {ep: "up" for ep in everyone}


def test_errors_read_as_a_node_peers(procs):
    _, py = procs.python_peer()
    got = procs.zeromesh("request", "--seeds", py, "nope")
    assert got == ""  # nothing on stdout: the error went to stderr, as for a Node peer
    import subprocess, sys  # noqa: E401
    from conftest import NODE, ROOT
    r = subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "request", "--seeds", py, "boom"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "ERR_ZEROMESH_REMOTE" in r.stderr and "E_STOCK" in r.stderr
    r = subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "request", "--seeds", py, "nope"], capture_output=True, text=True, timeout=30)
    assert "ERR_ZEROMESH_UNKNOWN_METHOD" in r.stderr


def test_a_python_peer_killed_under_load_fails_no_idempotent_request(procs):
    _, a = procs.node_peer()
    p, py, base = loaded_python_peer(procs, a)
    c = procs.node_client([a, py], peers=2, method="whoami", seconds=3, concurrency=16)
    assert procs.line(c) == "ready"
    eventually(lambda: procs.metric(base, "zeromesh_peer_requests_total") >= 100 or (_ for _ in ()).throw(AssertionError("no load on it yet")))  # under load
    p.send_signal(signal.SIGKILL)
    out = procs.result(c)
    assert out["failed"] == {}, out
    assert out["ok"] > 100
    assert out["byEndpoint"][py] != "up"
    eventually(lambda: py not in alive(procs, a) or (_ for _ in ()).throw(AssertionError("still alive")), timeout=15)


def test_a_python_peer_stopped_with_sigterm_drains_and_exits_0(procs):
    _, a = procs.node_peer()
    p, py, base = loaded_python_peer(procs, a)
    c = procs.node_client([a, py], peers=2, method="whoami", seconds=3, concurrency=16)
    assert procs.line(c) == "ready"
    eventually(lambda: procs.metric(base, "zeromesh_peer_requests_total") >= 100 or (_ for _ in ()).throw(AssertionError("no load on it yet")))  # under load
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=15) == 0
    out = procs.result(c)
    assert out["failed"] == {}, out
    states = {m["endpoint"]: m["state"] for m in json.loads(procs.zeromesh("members", "--seeds", a, "--json"))}
    assert states.get(py, "left") in ("left", "dead")


def test_a_python_peer_frozen_is_dropped_and_taken_back(procs):
    _, a = procs.node_peer()
    p, py = procs.python_peer("--seeds", a)
    eventually(lambda: alive(procs, a) == {a, py} or (_ for _ in ()).throw(AssertionError()))
    p.send_signal(signal.SIGSTOP)
    eventually(lambda: py not in alive(procs, a) or (_ for _ in ()).throw(AssertionError("still alive")), timeout=15)
    p.send_signal(signal.SIGCONT)
    eventually(lambda: py in alive(procs, a) or (_ for _ in ()).throw(AssertionError("not back")), timeout=15)


def test_hostile_input_at_a_python_peer_is_dropped_and_it_keeps_serving(procs):
    p, py = procs.python_peer()
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, 3000)
    s.connect(py)
    try:
        garbage = [
            b"\xa7\x5a\x4d\x01\x01\xff",  # undecodable body
            b"\xa7\x5a\x4d\x01\x01" + codec.pack([]),  # empty request list
            b"\xa7\x5a\x4d\x01\x07" + codec.pack([1, "tcp://127.0.0.1:1", [["not an endpoint", 1, 0, {}]]]),  # an ACK sent to a peer, with a bad claim
            b"\xa7\x5a\x4d\x01\x06" + codec.pack([1, "tcp://127.0.0.1:1", "tcp://127.0.0.1:2", [["tcp://127.0.0.1:9", 2**60, 0, {}]]]),  # beyond the horizon
            b"\xa7\x5a\x4d\x01\x01" + codec.pack([[1, "x", deep(70), 0]]),  # too deep
            b"\xa7\x5a\x4d\x01\x01" + codec.pack([["1", "echo", None, 0]]),  # id is a string
            b"not zeromesh at all",
        ]
        for g in garbage:
            s.send(g)
        s.send(b"\xa7\x5a\x4d\x09\x01" + codec.pack([[1, "echo", None, 0]]))  # version 9: answered ERROR 1
        answers = []
        s.send(codec.encode_request([[2, "echo", {"still": "here"}, 1000]]))
        while True:
            m = codec.decode(s.recv())
            answers.append(m)
            if m["type"] == codec.MessageType.REPLY and any(r["id"] == 2 for r in m["replies"]):
                break
        errors = [m for m in answers if m["type"] == codec.MessageType.ERROR]
        assert [e["code"] for e in errors] == [1]  # only the wrong version is answered, with ERROR 1 (4.5)
        entries = {r["id"]: r for m in answers if m["type"] == codec.MessageType.REPLY for r in m["replies"]}  # one frame or several: the peer batches what one turn answers
        assert entries[1]["status"] == 5  # the too-deep request: INVALID_REQUEST
        assert entries[2]["value"] == {"still": "here"}
        assert p.poll() is None
    finally:
        s.close()
        ctx.term()


def test_a_node_publish_reaches_a_python_group_and_a_node_group_each_acknowledged(procs):
    import subprocess
    from conftest import NODE, ROOT

    _, a = procs.node_peer()
    _, py = procs.python_peer("--seeds", a)
    eventually(lambda: alive(procs, a) == {a, py} or (_ for _ in ()).throw(AssertionError()))
    zm = [NODE, str(ROOT / "bin" / "zeromesh.js")]
    r = subprocess.run([*zm, "publish", "--seeds", a, "cache.drop", '"user:42"'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    delivered = json.loads(r.stdout)["delivered"]
    assert sorted((d["group"], d["endpoint"]) for d in delivered) == [("cache.drop", a), ("python-cache", py)]
    # A handler's error reaches the publisher with its code, the group that failed named.
    r = subprocess.run([*zm, "publish", "--seeds", a, "orders.placed", '{"bad": true}'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "E_BILL" in r.stderr and "python-billing" in r.stderr
    r = subprocess.run([*zm, "broadcast", "--seeds", a, "cache.drop", '"user:7"'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert sorted(d["endpoint"] for d in json.loads(r.stdout)["delivered"]) == sorted([a, py])
