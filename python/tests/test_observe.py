"""What a Python peer tells its operator, as a process: JSON log lines (--log-format json) for a
handler's error, a call past its deadline, a worker replaced and a member's death; and --http
with /metrics (prometheus_client, the Node peer's metric names), /healthz and /readyz."""
import asyncio
import signal
import time
import urllib.error
import urllib.request

import zmq

from zeromesh import codec
from zeromesh.constants import MessageType
from zeromesh.peer import Peer


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def ask(ep, entries, n, timeout=10.0):
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(ep)
    try:
        s.send(codec.encode_request(entries))
        out, end = [], time.monotonic() + timeout
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


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{") and line.split(" ")[0] == name:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def test_logs_and_the_operations_endpoint(procs):
    p, ep = procs.python_peer("--workers", "1", "--http", "127.0.0.1:0", "--log-format", "json", "--log-level", "info")
    http = procs.log(p, lambda line: "http" in line)["http"]
    base = f"http://{http}"
    assert get(f"{base}/healthz") == (200, "ok\n")
    assert get(f"{base}/readyz") == (200, "ready\n")
    assert get(f"{base}/nope")[0] == 404
    replies = ask(ep, [[1, "whoami", None, 5000], [2, "boom", None, 5000]], 2)
    assert sorted(r["id"] for r in replies) == [1, 2]
    line = procs.log(p, lambda line: line.get("method") == "boom")
    assert line["level"] == "warning" and line["code"] == "E_STOCK" and "out of stock" in line["msg"]
    # A call past its deadline: its worker is killed and replaced, both logged.
    ask(ep, [[3, "hang", {"seconds": 30}, 200], [4, "whoami", None, 5000]], 1)
    replaced = procs.log(p, lambda line: line.get("logger") == "zeromesh.pool")
    assert "replaced" in replaced["msg"] and replaced["level"] == "warning"
    assert procs.log(p, lambda line: line.get("method") == "hang")["msg"].startswith("a call of hang passed its deadline")
    _, text = get(f"{base}/metrics")
    assert metric(text, "zeromesh_peer_requests_total") == 4
    assert metric(text, 'zeromesh_peer_replies_total{outcome="ok"}') == 2
    assert metric(text, 'zeromesh_peer_replies_total{outcome="remote_error"}') == 1
    assert metric(text, 'zeromesh_peer_method_errors_total{method="boom"}') == 1
    assert metric(text, "zeromesh_peer_request_duration_seconds_count") == 3
    assert metric(text, "zeromesh_peer_threads") == 1
    assert metric(text, "zeromesh_peer_workers_replaced_total") == 1
    assert metric(text, "zeromesh_peer_deadlines_passed_total") == 1
    assert metric(text, 'zeromesh_peer_members{state="alive"}') == 1
    assert metric(text, "zeromesh_peer_ready") == 1
    # A member that dies is logged at warning by the peer that declares it.
    q, other = procs.python_peer("--seeds", ep)
    procs.log(p, lambda line: line.get("member") == other and line.get("state") == "alive", timeout=10)
    q.send_signal(signal.SIGKILL)
    dead = procs.log(p, lambda line: line.get("member") == other and line.get("state") == "dead", timeout=15)
    assert dead["level"] == "warning" and dead["msg"].startswith(f"member {other} dead")


def test_readyz_goes_503_from_the_moment_the_peer_drains():
    from zeromesh.ops import OpsServer

    async def slow(args):
        await asyncio.sleep(args)
        return args

    async def main():
        peer = Peer(handlers={"slow": slow})
        ep = await peer.start()
        ops = OpsServer(peer, "127.0.0.1", 0)
        port = await ops.start()
        loop = asyncio.get_running_loop()
        ctx = zmq.asyncio.Context()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)
        try:
            assert (await loop.run_in_executor(None, get, f"http://127.0.0.1:{port}/readyz"))[0] == 200
            await s.send(codec.encode_request([[1, "slow", 1.0, 5000]]))  # holds the drain open
            while peer.inflight == 0:
                await asyncio.sleep(0.01)
            stopping = asyncio.ensure_future(peer.stop())
            while peer.state != "stopping":
                await asyncio.sleep(0.01)
            assert (await loop.run_in_executor(None, get, f"http://127.0.0.1:{port}/readyz")) == (503, "not ready\n")
            assert (await loop.run_in_executor(None, get, f"http://127.0.0.1:{port}/healthz"))[0] == 200
            await stopping
        finally:
            s.close()
            ctx.term()
            await ops.close()
    import zmq.asyncio  # noqa: F401 - the DEALER above is an asyncio socket
    asyncio.run(asyncio.wait_for(main(), 30))
