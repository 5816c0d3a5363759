"""A secured mixed mesh (PROTOCOL.md 1.2, 4.7): a Node peer and a Python peer on one cluster key,
each letting in the client key alice; the Python peer joins through sealed membership
requests, Node clients with alice's key reach it, a client whose key is not listed is refused
at the handshake, and the Python client reaches Node peers over CURVE."""
import asyncio
import json
import signal
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


def keygen(dir, name):
    subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "keygen", str(dir / name)], check=True, capture_output=True, timeout=30)


def test_revoking_a_key_at_a_python_peer_cuts_its_open_connections(procs, tmp_path):
    """PROTOCOL.md 4.9 at a Python peer: Python and Node clients prove their keys on their
    connections; a key dropped from the allow-list's directory (watched, no signal) gets no more
    answers on the connection it holds, while another client's goes on, and the peer closes
    nobody else's connection to do it."""
    keygen(tmp_path, "cluster")
    allow = tmp_path / "allow"
    allow.mkdir()
    for name in ("alice", "bob"):
        keygen(tmp_path, name)
        (allow / f"{name}.pub").write_text((tmp_path / f"{name}.pub").read_text())
    k = lambda name: str(tmp_path / name)  # noqa: E731

    async def main():
        from zeromesh.peer import Peer
        peer = Peer(handlers={"echo": echo}, security={"cluster_key": k("cluster.key"), "allow": [str(allow)]})
        ep = await peer.start()
        alice = Client([ep], security={"cluster_public": k("cluster.pub"), "secret_key": k("alice.key")})
        bob = Client([ep], security={"cluster_public": k("cluster.pub"), "secret_key": k("bob.key")})
        try:
            async with alice, bob:
                assert await alice.request("echo", 1, timeout=3000) == 1
                assert await bob.request("echo", 2, timeout=3000) == 2
                # A Node client with bob's key proves it too, over a connection of its own.
                node = await asyncio.to_thread(lambda: procs.node_client([ep], method="echo", args="3", seconds="0.3", concurrency="1", key=k("bob.key"), **{"cluster-pub": k("cluster.pub")}))
                ready = await asyncio.to_thread(procs.line, node, 20)
                assert ready == "ready"
                done = await asyncio.to_thread(procs.result, node)
                assert done["ok"] > 0 and done["failed"] == {}, done
                assert alice.counts["proofs"] == 1 and bob.counts["proofs"] == 1
                proofs = peer.stats()["key_proofs"]
                assert (proofs["proofs"], proofs["bad_proofs"]) == (3, 0), proofs
                (allow / "alice.pub").unlink()  # the watch reads the directory again within a second

                async def revoked():
                    return peer.stats()["key_proofs"]["reloads"] >= 1
                for _ in range(100):
                    if await revoked():
                        break
                    await asyncio.sleep(0.05)
                proofs = peer.stats()["key_proofs"]
                assert proofs["reloads"] == 1 and proofs["cut_connections"] == 1 and proofs["resets"] == 0, proofs
                with pytest.raises(Exception) as failed:
                    await alice.request("echo", 4, timeout=1500)
                assert getattr(failed.value, "code", "") in ("ERR_ZEROMESH_TIMEOUT", "ERR_ZEROMESH_NO_PEERS"), failed.value
                assert await bob.request("echo", 5, timeout=3000) == 5  # bob's connection was never closed
                assert peer.stats()["key_proofs"]["cut_frames"] >= 1
        finally:
            await peer.stop()

    asyncio.run(main())


def test_a_python_client_proves_its_key_to_a_node_peer(procs, tmp_path):
    """The other way: a Node peer, whose allow-list drops alice at SIGHUP, cuts the Python
    client's proven connection alone; it never has to close every connection (which it does
    when a connection that proved nothing asked for work)."""
    for name in ("cluster", "alice", "bob"):
        keygen(tmp_path, name)
    k = lambda name: str(tmp_path / name)  # noqa: E731
    node = procs.start([NODE, str(ROOT / "bin" / "zeromesh.js"), "peer", "--demo-handlers", "--bind", "tcp://127.0.0.1:0", "--log-level", "info",
                        "--cluster-key", k("cluster.key"), "--allow", f'{k("alice.pub")},{k("bob.pub")}'])
    ep = procs.line(node)

    async def main():
        alice = Client([ep], security={"cluster_public": k("cluster.pub"), "secret_key": k("alice.key")})
        bob = Client([ep], security={"cluster_public": k("cluster.pub"), "secret_key": k("bob.key")})
        async with alice, bob:
            assert await alice.request("echo", 1, timeout=3000) == 1
            assert await bob.request("echo", 2, timeout=3000) == 2
            (tmp_path / "alice.pub").write_text((tmp_path / "bob.pub").read_text())  # alice's file now names bob's key
            node.send_signal(signal.SIGHUP)
            await asyncio.get_running_loop().run_in_executor(None, procs.log, node, lambda line: "allow-list read again" in line.get("msg", ""), 10.0)
            with pytest.raises(Exception):
                await alice.request("echo", 3, timeout=1500)
            assert await bob.request("echo", 4, timeout=3000) == 4
    asyncio.run(main())
    node.send_signal(signal.SIGTERM)
    node.wait(timeout=15)
    log = procs.stderr(node)
    assert "allow-list read again" in log, log[-2000:]
    assert "closing every connection" not in log, log[-2000:]


async def echo(args):
    return args
