"""Contracts on the Python side (zeromesh.contract): a handler module serves a contract's dotted
names; the peer checks the args against the input JSON Schema before any handler (or worker)
sees them and answers REMOTE ERR_ZEROMESH_INVALID_INPUT with issues in the Node shape
(PROTOCOL.md 4.2.2); its SERVICE answer carries the schemas (4.8.1), so `zeromesh describe`
shows them."""
import asyncio
import json
import subprocess

import pytest
import zmq
import zmq.asyncio

import contract_sample
from conftest import NODE, ROOT
from zeromesh import codec
from zeromesh.constants import MessageType, Status
from zeromesh.contract import canonical, contract, implement
from zeromesh.errors import InvalidArgumentError
from zeromesh.peer import Peer


async def ask(s, frame, kind, timeout=5.0):
    await s.send(frame)
    while True:
        m = codec.decode(await asyncio.wait_for(s.recv(), timeout))
        if m["type"] == kind:
            return m


@pytest.mark.parametrize("workers", [0, 1])
def test_the_input_is_checked_before_the_handler_and_refused_with_issues(workers):
    async def main():
        peer = Peer(handlers=contract_sample, workers=workers)
        assert sorted(peer.handlers) == ["ping", "scoring.score"]
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)
        try:
            m = await ask(s, codec.encode_request([[1, "scoring.score", {"text": "abc", "weight": 2}, 5000]]), MessageType.REPLY)
            assert [(r["status"], r["value"]) for r in m["replies"]] == [(Status.OK, 6)]
            m = await ask(s, codec.encode_request([[2, "scoring.score", {"text": 5, "extra": "secret"}, 5000]]), MessageType.REPLY)
            [r] = m["replies"]
            assert r["status"] == Status.REMOTE
            message, code, issues = r["value"]
            assert code == "ERR_ZEROMESH_INVALID_INPUT"
            assert message.startswith("invalid input for scoring.score: ")
            assert sorted(issues, key=lambda i: i[1]) == [["additional properties not allowed", []], ['expected type "string"', ["text"]]]
            assert "secret" not in json.dumps(r["value"])  # never the offending value
            m = await ask(s, codec.encode_request([[3, "scoring.score", None, 5000]]), MessageType.REPLY)
            assert m["replies"][0]["value"][2] == [['expected type "object"', []]]
            assert peer.stats()["invalid_input"] == 2
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_the_service_answer_carries_the_contract_and_its_label():
    async def main():
        peer = Peer(handlers=contract_sample)
        ep = await peer.start()
        ctx = zmq.asyncio.Context()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)
        try:
            await s.send(codec.encode_service_get(7))
            raw = codec.msgpack.unpackb((await asyncio.wait_for(s.recv(), 5))[5:], raw=False, strict_map_key=False)
            element = raw[7]
            assert element == [["scoring", "1.0.0", [["score", False, contract_sample.scoring.methods["score"]["input"], {"type": "number"}]]]]
            assert raw[4]["zeromesh/contracts"] == peer.labels["zeromesh/contracts"] and len(peer.labels["zeromesh/contracts"]) == 8
        finally:
            s.close()
            ctx.term()
            await peer.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def test_contract_and_implement_say_what_is_wrong():
    with pytest.raises(InvalidArgumentError, match="no dots"):
        contract("a.b", methods={"m": {"input": True, "output": True}})
    with pytest.raises(InvalidArgumentError, match="JSON Schema"):
        contract("a", methods={"m": {"input": "string", "output": True}})
    c = contract("a", methods={"m": {"input": True, "output": True}, "n": {"input": True, "output": True}})
    with pytest.raises(InvalidArgumentError, match="missing n; x not in the contract"):
        implement(c, {"m": len, "x": len})
    with pytest.raises(InvalidArgumentError, match="not a valid JSON Schema"):
        Peer(handlers=implement(contract("b", methods={"m": {"input": {"type": 5}, "output": True}}), {"m": len}))


def test_the_canonical_json_is_javascripts():
    """The zeromesh/contracts label's text, as protocol/contracts.js writes it: keys sorted, no spaces, 1.0 as 1, no ASCII escapes."""
    assert canonical([{"b": 1.0, "a": [True, None, "é"]}]) == '[{"a":[true,null,"é"],"b":1}]'


def test_a_node_tool_sees_the_schemas_and_the_refusal(procs):
    _, py = procs.python_peer("--handlers", "contract_sample", "--workers", "1")
    out = json.loads(procs.zeromesh("describe", "--seeds", py, "--json"))
    text = json.dumps(out)
    assert "scoring.score" in text and '"minLength": 1' in text, text
    r = subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "request", "--seeds", py, "scoring.score", '{"text": 5}'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "ERR_ZEROMESH_INVALID_INPUT" in r.stderr and "text" in r.stderr, r.stderr
    r = subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), "request", "--seeds", py, "scoring.score", '{"text": "abcd"}'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and json.loads(r.stdout) == 4, r.stderr
