"""The Python client over Node peers of the same commit: it learns the mesh from one seed,
balances, reads errors by code, and fails over around a peer killed under load."""
import asyncio
import signal

import pytest

from zeromesh.client import Client, SyncClient
from zeromesh.errors import RemoteError, UnknownMethodError


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_it_learns_the_mesh_from_one_seed_and_balances_over_it(procs):
    _, a = procs.node_peer()
    _, b = procs.node_peer("--seeds", a)

    async def main():
        async with Client([a]) as c:
            seen = {}
            for _ in range(200):
                out = await c.request("whoami")
                seen[out["endpoint"]] = seen.get(out["endpoint"], 0) + 1
            return seen, c.peers()

    seen, peers = run(main())
    assert set(seen) == {a, b}, seen
    assert min(seen.values()) > 20
    assert {p["endpoint"] for p in peers if p["state"] == "up"} == {a, b}


def test_errors_by_code(procs):
    _, a = procs.node_peer()

    async def main():
        async with Client([a], timeout=3000) as c:
            with pytest.raises(UnknownMethodError) as unknown:
                await c.request("nope")
            with pytest.raises(RemoteError) as remote:
                await c.request("sleep", {"ms": "not a number"})
            return unknown.value, remote.value

    unknown, remote = run(main())
    assert unknown.code == "ERR_ZEROMESH_UNKNOWN_METHOD"
    assert remote.code == "ERR_ZEROMESH_REMOTE"


import pytest as _pytest  # noqa: E402


@_pytest.mark.parametrize("fault", ["SIGKILL", "SIGTERM", "SIGSTOP"])
def test_a_node_peer_failing_under_load_fails_no_idempotent_request(procs, fault):
    _, a = procs.node_peer()
    victim, b = procs.node_peer("--seeds", a)

    async def main():
        async with Client([a, b]) as c:
            await c.wait_for("whoami", count=2, timeout=10000)
            failed, ok = [], 0
            loop = asyncio.get_running_loop()
            end = loop.time() + (6 if fault == "SIGSTOP" else 3)

            async def worker():
                nonlocal ok
                while loop.time() < end:
                    try:
                        await c.request("whoami", None, idempotent=True, timeout=8000)
                        ok += 1
                    except Exception as err:  # counted, never raised: the test reads them
                        failed.append(getattr(err, "code", repr(err)))

            async def fail():
                await asyncio.sleep(0.8)
                victim.send_signal(getattr(signal, fault))

            await asyncio.gather(fail(), *(worker() for _ in range(16)))
            states = {p["endpoint"]: p["state"] for p in c.peers()}
            back = None
            if fault == "SIGSTOP":
                victim.send_signal(signal.SIGCONT)
                for _ in range(200):  # taken back within 10 s of the thaw
                    await asyncio.sleep(0.05)
                    if {p["endpoint"]: p["state"] for p in c.peers()}[b] == "up":
                        back = True
                        break
            return ok, failed, states, back

    ok, failed, states, back = run(main())
    assert failed == []
    assert ok > 100
    assert states[b] == "down"
    if fault == "SIGSTOP":
        assert back is True


def test_the_blocking_client_for_scripts(procs):
    _, a = procs.node_peer()
    with SyncClient([a]) as c:
        assert c.request("echo", {"n": 1}) == {"n": 1}
        assert [p["endpoint"] for p in c.peers()] == [a]


def test_a_retry_prefers_a_peer_at_another_address_than_those_tried():
    # The Node client's rule (test/unit/call-path.test.js): peers of one host share its faults.
    from zeromesh.client import PeerState, elsewhere, host_of
    a1, a2, b1 = (PeerState(ep) for ep in ("tcp://10.0.0.1:1001", "tcp://10.0.0.1:1002", "tcp://10.0.0.2:1001"))
    assert host_of("tcp://10.0.0.1:1001") == "10.0.0.1" and host_of("tcp://[::1]:5555") == "[::1]" and host_of("ipc:///tmp/x") == "ipc:///tmp/x"
    assert elsewhere([a2, b1], {a1.endpoint}) == [b1]
    assert elsewhere([a2], {a1.endpoint}) == [a2]  # one host only: another peer on it
    assert elsewhere([a1, a2, b1], set()) == [a1, a2, b1]
