"""The spec's vectors (protocol/vectors.json, the one source both languages read): each decodes
to its message and this implementation's own encoding decodes back to it; each reject is
refused. The kinds this implementation does not read yet (streams, bulk frames, SEALED) are
refused as such, never passed over."""
import json
from pathlib import Path

import pytest

from zeromesh import codec
from zeromesh.constants import MessageType
from zeromesh.errors import ProtocolError
from zeromesh.service import describe

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "protocol" / "vectors.json").read_text())["vectors"]
NOT_READ = {"stream-open", "stream-item", "stream-credit", "stream-end", "bulk-item"}
# Rejects of messages this implementation does not read: refused all the same.
NOT_READ_REJECTS = {"a stream item frame with no items", "a stream credit of more than 1024 items"}


def from_json(x):
    """JSON has no bytes: { "hex": ... } stands for a binary."""
    if isinstance(x, dict):
        if set(x) == {"hex"}:
            return bytes.fromhex(x["hex"])
        return {k: from_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [from_json(v) for v in x]
    return x


def raw(v):
    return bytes.fromhex(v["hex"].replace(" ", ""))


def body_of(m):
    """The decoded message back in the vector's JSON form, for the kinds written as `body`."""
    t = m["type"]
    if t == MessageType.REQUEST:
        return None
    if t == MessageType.PING:
        return [m["seq"]]
    if t == MessageType.PONG:
        return [m["seq"], m["meta"]]
    if t == MessageType.ERROR:
        return [m["code"], m["message"], m["min_version"], m["max_version"]]
    raise AssertionError(t)


def check_message(v):
    msg = from_json(v["message"])
    kind = msg["kind"]
    got = codec.decode(raw(v))
    if kind in ("request", "event", "reply"):
        # Entries as they travel: decode the frame's body as it is, and the checked fields.
        import msgpack
        body = msgpack.unpackb(raw(v)[5:], raw=False, strict_map_key=False)
        assert body == msg["body"]
        if kind == "request":
            assert [r["id"] for r in got["requests"]] == [e[0] for e in msg["body"]]
            assert [r["method"] for r in got["requests"]] == [e[1] for e in msg["body"]]
            again = codec.decode(codec.encode_request(msg["body"]))
        elif kind == "event":
            assert [(e["id"], e["event"], e["group"], e["ack"]) for e in got["events"]] == [(e[0], e[1], e[4], e[5]) for e in msg["body"]]
            again = codec.decode(codec.encode_event(msg["body"]))
        else:
            assert got["meta"] == msg["body"][0]
            assert [[r["id"], r["status"], r["value"]] for r in got["replies"]] == [e[:3] for e in msg["body"][1]]
            again = codec.decode(codec.encode_reply(*msg["body"]))
        assert {k: x for k, x in again.items()} == got
    elif kind in ("ping", "pong", "error"):
        assert body_of(got) == msg["body"]
        enc = {"ping": lambda b: codec.encode_ping(b[0]), "pong": lambda b: codec.encode_pong(b[0], b[1]), "error": lambda b: codec.frame(MessageType.ERROR, b)}[kind]
        assert codec.decode(enc(msg["body"])) == got
    elif kind == "gossip":
        assert got["seq"] == msg["seq"] and got["gossip"] == msg["msg"]
        assert codec.decode(codec.encode_gossip(msg["seq"], msg["msg"])) == got
    elif kind == "cancel":
        assert got["ids"] == msg["ids"]
        assert codec.decode(codec.encode_cancel(msg["ids"])) == got
    elif kind == "members-get":
        assert got["seq"] == msg["seq"]
        assert codec.decode(codec.encode_members_get(msg["seq"])) == got
    elif kind == "members":
        assert (got["seq"], got["digest"], got["members"]) == (msg["seq"], msg["digest"], msg["members"])
        assert codec.decode(codec.encode_members(msg["seq"], msg["digest"], msg["members"])) == got
    elif kind == "service-get":
        assert got["seq"] == msg["seq"]
        assert codec.decode(codec.encode_service_get(msg["seq"])) == got
    elif kind == "sealed":
        from zeromesh.security import seal, seal_key, unseal
        key = seal_key(msg["clusterSecretKey"])
        inner = bytes.fromhex(msg["frame"])
        assert got["inner"] == inner and unseal(key, got["tag"], got["inner"]) == inner
        assert codec.decode(seal(key, inner)) == got
    elif kind == "key-proof":
        from zmq.utils import z85

        from zeromesh.key_proof import check_key_proof, key_proof
        raw_key = lambda k: z85.decode(msg[k].encode())  # noqa: E731
        ch, mac = bytes.fromhex(msg["ch"]), bytes.fromhex(msg["mac"])
        assert (got["type"], got["key"], got["mac"]) == (MessageType.KEY_PROOF, raw_key("clientPublicKey"), mac)
        # The client's side: its secret key and the cluster's public key give the vector's mac.
        assert key_proof(raw_key("clientSecretKey"), raw_key("clusterPublicKey"), ch) == mac
        # The peer's side: the cluster's secret key and the client's key check it, for this challenge only.
        assert check_key_proof(raw_key("clusterSecretKey"), got["key"], ch, got["mac"])
        assert not check_key_proof(raw_key("clusterSecretKey"), got["key"], bytes(16), got["mac"])
        assert codec.encode_key_proof(got["key"], mac) == raw(v)
    elif kind == "service":
        s = msg["service"]
        assert got["seq"] == msg["seq"] and got["digest"] == msg["digest"] and got["features"] == msg["features"]
        assert {k: got["service"][k] for k in ("methods", "version", "labels", "capacity")} == {k: s[k] for k in ("methods", "version", "labels", "capacity")}
        for extra in ("contracts", "events", "streams"):
            assert got.get(extra) == s.get(extra)
        if not any(extra in s for extra in ("contracts", "events", "streams")):
            d = describe(s["methods"], s["version"], s["labels"], s["capacity"])
            assert codec.decode(codec.encode_service(msg["seq"], d, msg["features"]))["service"] == got["service"]
    else:
        raise AssertionError(f"no check for {kind}")


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(v):
    kind = v["message"]["kind"]
    if kind == "flp":
        frames = v["message"]["frames"]
        assert raw(v) == frames[0].encode()
        assert not raw(v).startswith(b"\xa7\x5a\x4d")
    elif kind == "reject":
        with pytest.raises(ProtocolError) as refused:
            codec.decode(raw(v))
        assert refused.value.protocol_code == v["message"].get("errorCode")
        if v["message"]["why"] in NOT_READ_REJECTS:
            assert "not read by this implementation" in str(refused.value)
    elif kind == "bulk-reply":
        # It never asks for bulk frames (4.1 accepts 0), so a reply naming one is malformed.
        with pytest.raises(ProtocolError, match="bulk frame"):
            codec.decode(raw(v))
    elif kind in NOT_READ:
        with pytest.raises(ProtocolError, match="not read by this implementation"):
            codec.decode(raw(v))
    else:
        check_message(v)


def test_every_kind_is_covered():
    kinds = {v["message"]["kind"] for v in VECTORS}
    read = kinds - NOT_READ - {"flp", "reject", "bulk-reply"}
    assert read == {"request", "reply", "ping", "pong", "error", "gossip", "cancel", "members-get", "members", "service-get", "service", "event", "sealed", "key-proof"}
