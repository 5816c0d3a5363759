"""A secured mixed mesh (PROTOCOL.md 1.2, 4.7): a Node peer and a Python peer on one cluster key,
each letting in the client key alice; the Python peer joins through sealed membership
requests, Node clients with alice's key reach it, a client whose key is not listed is refused
at the handshake, and the Python client reaches Node peers over CURVE."""
import asyncio
import json
import subprocess
import sys

import pytest

from conftest import NODE, ROOT, eventually
from zeromesh.client import Client


@pytest.fixture
def keys(tmp_path):
    for name in ("cluster", "alice", "mallory"):
        subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "keygen", str(tmp_path / name)], check=True, capture_output=True, timeout=30)
    return tmp_path


def test_a_secured_mixed_mesh(procs, keys):
    k = lambda name: str(keys / name)  # noqa: E731
    node = procs.start([NODE, str(ROOT / "bin" / "zeromesh.js"), "peer", "--demo-handlers", "--bind", "tcp://127.0.0.1:0", "--log-level", "warn",
                        "--cluster-key", k("cluster.key"), "--allow", k("alice.pub")])
    a = procs.line(node)
    py = procs.start([sys.executable, "-m", "zeromesh", "peer", "--handlers", "handlers_sample", "--log-level", "warning", "--seeds", a,
                      "--cluster-key", k("cluster.key"), "--allow", k("alice.pub")], {"PYTHONPATH": str(ROOT / "python" / "tests")})
    p = procs.line(py)
    zm = [NODE, str(ROOT / "bin" / "zeromesh.js")]
    alice = ["--cluster-pub", k("cluster.pub"), "--key", k("alice.key")]

    def members():
        out = subprocess.run([*zm, "members", "--seeds", a, "--json", *alice], capture_output=True, text=True, timeout=30).stdout
        states = {m["endpoint"]: m["state"] for m in json.loads(out)}
        assert states == {a: "alive", p: "alive"}, states
    eventually(members, timeout=15)
    # A Node client with an allowed key reaches the Python peer over CURVE.
    r = subprocess.run([*zm, "request", "--seeds", p, *alice, "echo", '{"secret": 1}'], capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stdout.strip()) == (0, '{"secret":1}'), r.stderr
    # A key the allow-list does not name is refused at the handshake, at once.
    r = subprocess.run([*zm, "request", "--seeds", p, "--cluster-pub", k("cluster.pub"), "--key", k("mallory.key"), "--timeout", "3000", "echo"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "ERR_ZEROMESH_HANDSHAKE" in r.stderr, r.stderr
    # So is a plain client.
    r = subprocess.run([*zm, "request", "--seeds", p, "--timeout", "2000", "echo"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1

    async def python_client():
        async with Client([a], security={"cluster_public": k("cluster.pub"), "secret_key": k("alice.key")}) as c:
            # sleep: served by the Node peer only; echo: by both, whichever the client picks
            return await c.request("sleep", {"ms": 1}, timeout=5000), await c.request("echo", {"n": 2}, timeout=5000)

    slept, echoed = asyncio.run(python_client())
    assert echoed == {"n": 2}
    assert slept == {"slept": 1}  # the Node peer, reached over CURVE
