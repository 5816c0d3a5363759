"""The wire format (protocol/PROTOCOL.md sections 3 and 4): frames encoded and decoded, every
field checked before anything else looks at it. No sockets, no clocks.

decode() returns a dict with `type` and `version` and the message's fields, or raises
ProtocolError (with `protocol_code` when the frame is answered with ERROR: 4.5)."""
from __future__ import annotations

import re
from typing import Any

import msgpack

from .constants import (  # noqa: F401  (MessageType is used by callers)
    GOSSIP_NAMES,
    HEADER_SIZE,
    MAX_ID,
    PROTOCOL_VERSION,
    PROTOCOL_VERSION_MAX,
    PROTOCOL_VERSION_MIN,
    SIGNATURE,
    Limits,
    MessageType,
    ProtocolErrorCode,
)
from .endpoint import is_wire_endpoint
from .errors import ProtocolError

_KNOWN_TYPES = {int(t) for t in MessageType}
# Types this implementation reads; the others (streams) are malformed here.
_READ_TYPES = {
    MessageType.REQUEST, MessageType.REPLY, MessageType.PING, MessageType.PONG, MessageType.ERROR,
    MessageType.PROBE, MessageType.ACK, MessageType.PROBE_REQ, MessageType.NACK, MessageType.SYNC,
    MessageType.MEMBERS_GET, MessageType.MEMBERS, MessageType.CANCEL, MessageType.SERVICE_GET,
    MessageType.SERVICE, MessageType.EVENT, MessageType.SEALED, MessageType.KEY_PROOF,
}
_HEADER_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class Undefined:
    """JavaScript's `undefined` (fixext 1 of type 0, data 00: PROTOCOL.md 3.2)."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = Undefined()


def _ext_hook(code: int, data: bytes) -> Any:
    if code == 0 and data == b"\x00":
        return UNDEFINED
    raise ProtocolError(f"extension type {code} is not allowed (PROTOCOL.md 3.2)")


def _default(value: Any) -> Any:
    if value is UNDEFINED:
        return msgpack.ExtType(0, b"\x00")
    raise TypeError(f"cannot encode {type(value).__name__}")


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True, default=_default)


def frame(message_type: int, body: Any) -> bytes:
    """A zeromesh frame: signature, version 1, type, then the body as one MessagePack value."""
    return SIGNATURE + bytes((PROTOCOL_VERSION, int(message_type))) + pack(body)


def fail(message: str) -> ProtocolError:
    return ProtocolError(f"zeromesh protocol: {message}")


def is_uint(v: Any, top: int = MAX_ID) -> bool:
    """A uint of the spec: an int (or a float64 that holds one) from 0 to `top`."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return 0 <= v <= top
    if isinstance(v, float):
        return v.is_integer() and 0 <= v <= top
    return False


_SCALARS = frozenset({type(None), str, int, float, bool, bytes, Undefined, msgpack.Timestamp})


def as_uint(v: Any) -> int:
    return int(v)


def check_value(v: Any, max_depth: int, depth: int = 0) -> str | None:
    """None when `v` is plain data nested no deeper than `max_depth`, else why not. The types
    the decoder makes are looked up by exact type first (a set), so a map of scalars costs one
    lookup a value, with no call."""
    t = type(v)
    if t in _SCALARS:
        return None
    if depth >= max_depth:
        return f"nested deeper than {max_depth}"
    if t is list:
        for x in v:
            if type(x) not in _SCALARS:
                r = check_value(x, max_depth, depth + 1)
                if r is not None:
                    return r
        return None
    if t is dict:
        for k, x in v.items():
            if type(k) is not str:
                return "a map key is not a string"
            if type(x) not in _SCALARS:
                r = check_value(x, max_depth, depth + 1)
                if r is not None:
                    return r
        return None
    if isinstance(v, (str, int, float, bytes, Undefined, msgpack.Timestamp)):
        return None  # a subclass (none the decoder makes)
    if isinstance(v, list):
        return check_value(list(v), max_depth, depth)
    if isinstance(v, dict):
        return check_value(dict(v), max_depth, depth)
    return f"a {type(v).__name__} is not plain data"


def _check_list(v: Any, what: str, max_batch: int) -> list:
    if not isinstance(v, list):
        raise fail(f"{what} must be an array")
    if len(v) == 0:
        raise fail(f"{what} is empty")
    if len(v) > max_batch:
        raise fail(f"{what} has {len(v)} entries, more than {max_batch}")
    return v


def _check_map(v: Any, what: str) -> dict:
    if not isinstance(v, dict) or any(not isinstance(k, str) for k in v):
        raise fail(f"{what} must be a map")
    return v


def _utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def is_name(v: Any, top: int) -> bool:
    return isinstance(v, str) and 0 < _utf16_len(v) <= top


def read_headers(v: Any) -> tuple[dict[str, str] | None, str | None]:
    """Request headers (4.1): ({...}, None), or (None, why they are refused)."""
    if v is None:
        return {}, None
    if not isinstance(v, dict):
        return None, "headers must be a map of strings"
    if len(v) > Limits.max_headers:
        return None, f"at most {Limits.max_headers} headers"
    total = 0
    for k, x in v.items():
        if not isinstance(k, str) or not _HEADER_KEY.match(k):
            return None, f"header key {k!r} is not 1 to 64 characters of a-z, 0-9, ., _, -"
        if not isinstance(x, str) or len(x) > Limits.max_header_value:
            return None, f"header {k} must be a string of at most {Limits.max_header_value} characters"
        total += len(k) + len(x)
    if total > Limits.max_header_chars:
        return None, f"headers take more than {Limits.max_header_chars} characters"
    return dict(v), None


def _trace(v: Any) -> dict | None:
    """A trace carrier read leniently (4.1): a map of strings within limits, else None."""
    if not isinstance(v, dict) or len(v) > 8:
        return None
    for k, x in v.items():
        if not isinstance(k, str) or not 0 < len(k) <= 64 or not isinstance(x, str) or len(x) > 1024:
            return None
    return dict(v)


_TYPES = {int(m): m for m in MessageType}


def decode(buf: bytes, max_message_size: int = Limits.max_message_size) -> dict:
    """A frame's message, checked; raises ProtocolError when it is malformed."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise fail("frame must be bytes")
    buf = bytes(buf)
    if len(buf) > max_message_size:
        raise fail(f"frame of {len(buf)} bytes is larger than {max_message_size}")
    if len(buf) < HEADER_SIZE + 1:
        raise fail(f"frame of {len(buf)} bytes is too short")
    if buf[:3] != SIGNATURE:
        raise fail("frame has no zeromesh signature")
    version = buf[3]
    if not PROTOCOL_VERSION_MIN <= version <= PROTOCOL_VERSION_MAX:
        raise ProtocolError(
            f"zeromesh protocol: protocol version {version} is not supported ({PROTOCOL_VERSION_MIN}..{PROTOCOL_VERSION_MAX})",
            ProtocolErrorCode.UNSUPPORTED_VERSION,
        )
    t = buf[4]
    if t not in _KNOWN_TYPES:
        raise ProtocolError(f"zeromesh protocol: unknown message type {t}", ProtocolErrorCode.UNKNOWN_TYPE)
    if t not in _READ_TYPES:
        raise fail(f"message type {MessageType(t).name} is not read by this implementation")
    try:
        body = msgpack.unpackb(buf[HEADER_SIZE:], raw=False, ext_hook=_ext_hook, strict_map_key=False, timestamp=3)
    except ProtocolError:
        raise
    except Exception as cause:  # ExtraData, ValueError, RecursionError...
        raise fail(f"undecodable body: {cause}") from cause
    t = _TYPES[t]  # the enum member, looked up (not MessageType(t), a call per frame)
    out = _DECODERS[t](body) if t in _DECODERS else _decode_gossip(t, body)
    out["type"] = t
    out["version"] = version
    return out


def _decode_request(body: Any) -> dict:
    _check_list(body, "request list", Limits.max_batch)
    requests, invalid = [], []
    for e in body:
        if not isinstance(e, list) or len(e) < 4:
            raise fail("a request entry must be [id, method, args, timeoutMs]")
        rid, method, args, timeout_ms = e[0], e[1], e[2], e[3]
        if not is_uint(rid):
            raise fail("a request id must be an integer from 0 to 2^53-1")
        reason = None
        headers: dict | None = {}
        if not is_name(method, Limits.max_method_length):
            reason = f"method must be a string of 1 to {Limits.max_method_length} characters"
        elif not is_uint(timeout_ms):
            reason = "timeoutMs must be a non-negative integer"
        else:
            reason = check_value(args, Limits.max_depth)
        if reason is None and len(e) > 6:
            headers, reason = read_headers(e[6])
        if reason is None:
            requests.append({
                "id": as_uint(rid), "method": method, "args": args, "timeout_ms": as_uint(timeout_ms),
                "trace": _trace(e[4]) if len(e) > 4 else None, "headers": headers,
            })
        else:
            invalid.append({"id": as_uint(rid), "reason": reason})
    return {"requests": requests, "invalid": invalid}


def _decode_reply(body: Any) -> dict:
    if not isinstance(body, list) or len(body) < 2:
        raise fail("a reply must be [meta, entries]")
    meta = _check_map(body[0], "meta")
    replies = []
    for e in _check_list(body[1], "reply list", Limits.max_batch):
        if not isinstance(e, list) or len(e) < 3 or not is_uint(e[0]) or not is_uint(e[1], 255):
            raise fail("a reply entry must be [id, status, value]")
        if len(e) > 3 and e[3] is not None:
            raise fail("a reply entry names a bulk frame, and this implementation asks for none (4.2.1)")
        replies.append({"id": as_uint(e[0]), "status": as_uint(e[1]), "value": e[2]})
    return {"meta": meta, "replies": replies}


def _seq(body: Any, n: int, what: str) -> list:
    if not isinstance(body, list) or len(body) < n or not is_uint(body[0]):
        raise fail(f"{what} must start with a seq")
    return body


def _decode_ping(body: Any) -> dict:
    return {"seq": as_uint(_seq(body, 1, "a ping")[0])}


def _decode_pong(body: Any) -> dict:
    b = _seq(body, 2, "a pong")
    return {"seq": as_uint(b[0]), "meta": _check_map(b[1], "meta")}


def _decode_error(body: Any) -> dict:
    if not isinstance(body, list) or len(body) < 4 or not is_uint(body[0]) or not isinstance(body[1], str):
        raise fail("an error must be [code, message, minVersion, maxVersion]")
    return {"code": as_uint(body[0]), "message": body[1], "min_version": body[2], "max_version": body[3]}


def _decode_cancel(body: Any) -> dict:
    ids = _check_list(body, "cancel list", Limits.max_batch)
    if not all(is_uint(i) for i in ids):
        raise fail("cancel ids must be uints")
    return {"ids": [as_uint(i) for i in ids]}


def _endpoint(v: Any, what: str) -> str:
    if not is_wire_endpoint(v):
        raise fail(f"{what} must be a connectable endpoint in normal form (PROTOCOL.md 1.1)")
    return v


def decode_claims(v: Any, what: str) -> list[dict]:
    """Claims [endpoint, incarnation, state, meta, by?, service?] as dicts (4.6)."""
    if not isinstance(v, list):
        raise fail(f"{what} must be an array")
    if len(v) > Limits.max_claims:
        raise fail(f"{what} has more than {Limits.max_claims} entries")
    out = []
    for c in v:
        if not isinstance(c, list) or len(c) < 4:
            raise fail("a claim must be [endpoint, incarnation, state, meta]")
        endpoint = _endpoint(c[0], "a claim's endpoint")
        if not is_uint(c[1]) or not is_uint(c[2], 3):
            raise fail("a claim's incarnation and state must be uints (state 0..3)")
        meta = _check_map(c[3], "a claim's meta")
        if check_value(meta, Limits.max_meta_depth) is not None or len(pack(meta)) > Limits.max_meta_bytes:
            raise fail(f"a claim's meta must be at most {Limits.max_meta_bytes} bytes and {Limits.max_meta_depth} deep")
        claim = {"endpoint": endpoint, "incarnation": as_uint(c[1]), "state": as_uint(c[2]), "meta": meta}
        if len(c) > 4 and c[4] is not None:
            claim["by"] = _endpoint(c[4], "a claim's by")
        if len(c) > 5 and c[5] is not None:
            if not is_uint(c[5], 0xFFFFFFFF):
                raise fail("a claim's service must be a uint32")
            claim["service"] = as_uint(c[5])
        out.append(claim)
    return out


def encode_claim(c: dict) -> list:
    out = [c["endpoint"], c["incarnation"], c["state"], c.get("meta") or {}]
    if c.get("service") is not None:
        out += [c.get("by"), c["service"]]
    elif c.get("by") is not None:
        out.append(c["by"])
    return out


def _decode_gossip(t: MessageType, body: Any) -> dict:
    if not isinstance(body, list) or len(body) < 2 or not is_uint(body[0]):
        raise fail("a membership message must start with [seq, from]")
    msg: dict[str, Any] = {"type": GOSSIP_NAMES[t], "from": _endpoint(body[1], "from")}
    if t in (MessageType.PROBE, MessageType.PROBE_REQ):
        if len(body) < 4:
            raise fail("a probe must be [seq, from, target, claims]")
        msg["target"] = _endpoint(body[2], "target")
        msg["updates"] = decode_claims(body[3], "updates")
    elif t == MessageType.ACK:
        msg["updates"] = decode_claims(body[2], "updates") if len(body) > 2 else []
    elif t == MessageType.SYNC:
        if len(body) < 3:
            raise fail("a sync must be [seq, from, members]")
        msg["members"] = decode_claims(body[2], "members")
    return {"seq": as_uint(body[0]), "gossip": msg}


def _decode_members_get(body: Any) -> dict:
    return {"seq": as_uint(_seq(body, 1, "members-get")[0])}


def _decode_members(body: Any) -> dict:
    b = _seq(body, 3, "members")
    if not is_uint(b[1], 0xFFFFFFFF):
        raise fail("members' digest must be a uint32")
    return {"seq": as_uint(b[0]), "digest": as_uint(b[1]), "members": decode_claims(b[2], "members")}


def _decode_service_get(body: Any) -> dict:
    return {"seq": as_uint(_seq(body, 1, "service-get")[0])}


def _decode_service(body: Any) -> dict:
    from .service import describe, read_descriptor  # the descriptor's rules live with the digest

    b = _seq(body, 6, "service")
    if not is_uint(b[1], 0xFFFFFFFF):
        raise fail("a service digest must be a uint32")
    descriptor = read_descriptor(b[2], b[3], b[4], b[5])
    features = as_uint(b[6]) if len(b) > 6 and is_uint(b[6], 0xFFFFFFFF) else 0
    if describe(**descriptor)["digest"] != as_uint(b[1]):
        raise fail("a service answer's digest is not that of its contents")
    out = {"seq": as_uint(b[0]), "digest": as_uint(b[1]), "service": descriptor, "features": features}
    for i, name in ((7, "contracts"), (8, "events"), (9, "streams")):
        if len(b) > i and b[i] is not None:
            out[name] = b[i]
    return out


def _decode_event(body: Any) -> dict:
    _check_list(body, "event list", Limits.max_batch)
    events, invalid = [], []
    for e in body:
        if not isinstance(e, list) or len(e) < 6:
            raise fail("an event entry must be [id, event, payload, timeoutMs, group, ack]")
        eid, event, payload, timeout_ms, group, ack = e[:6]
        if not is_uint(eid):
            raise fail("an event id must be an integer from 0 to 2^53-1")
        if not isinstance(ack, bool):
            raise fail("an event's ack must be true or false")
        reason = None
        headers: dict | None = {}
        if not is_name(event, Limits.max_event_length):
            reason = f"event must be a string of 1 to {Limits.max_event_length} characters"
        elif group is not None and not is_name(group, Limits.max_event_length):
            reason = f"group must be nil or a string of 1 to {Limits.max_event_length} characters"
        elif not is_uint(timeout_ms):
            reason = "timeoutMs must be a non-negative integer"
        else:
            reason = check_value(payload, Limits.max_depth)
        if reason is None and len(e) > 7:
            headers, reason = read_headers(e[7])
        if reason is None:
            events.append({
                "id": as_uint(eid), "event": event, "payload": payload, "timeout_ms": as_uint(timeout_ms),
                "group": group, "ack": ack, "trace": _trace(e[6]) if len(e) > 6 else None, "headers": headers,
            })
        else:
            invalid.append({"id": as_uint(eid), "ack": ack, "reason": reason})
    return {"events": events, "invalid": invalid}


def _decode_sealed(body: Any) -> dict:
    if not isinstance(body, list) or len(body) < 2 or not isinstance(body[0], bytes) or len(body[0]) != 32 or not isinstance(body[1], bytes):
        raise fail("a sealed message must be [tag (32 bytes), frame]")
    return {"tag": body[0], "inner": body[1]}


def _decode_key_proof(body: Any) -> dict:
    def bytes32(x: Any) -> bool:
        return isinstance(x, bytes) and len(x) == 32
    if not isinstance(body, list) or len(body) < 2 or not bytes32(body[0]) or not bytes32(body[1]):
        raise fail("a key proof must be [key (32 bytes), mac (32 bytes)]")
    return {"key": body[0], "mac": body[1]}


_DECODERS = {
    MessageType.SEALED: _decode_sealed,
    MessageType.KEY_PROOF: _decode_key_proof,
    MessageType.REQUEST: _decode_request,
    MessageType.REPLY: _decode_reply,
    MessageType.PING: _decode_ping,
    MessageType.PONG: _decode_pong,
    MessageType.ERROR: _decode_error,
    MessageType.CANCEL: _decode_cancel,
    MessageType.MEMBERS_GET: _decode_members_get,
    MessageType.MEMBERS: _decode_members,
    MessageType.SERVICE_GET: _decode_service_get,
    MessageType.SERVICE: _decode_service,
    MessageType.EVENT: _decode_event,
}


# Encoders, one per message a Python peer or client sends.

def encode_request(entries: list) -> bytes:
    return frame(MessageType.REQUEST, entries)


def encode_reply(meta: dict, entries: list) -> bytes:
    return frame(MessageType.REPLY, [meta, entries])


def encode_ping(seq: int) -> bytes:
    return frame(MessageType.PING, [seq])


def encode_pong(seq: int, meta: dict) -> bytes:
    return frame(MessageType.PONG, [seq, meta])


def encode_error(code: int, message: str) -> bytes:
    return frame(MessageType.ERROR, [code, message, PROTOCOL_VERSION_MIN, PROTOCOL_VERSION_MAX])


def encode_key_proof(key: bytes, mac: bytes) -> bytes:
    """KEY_PROOF (4.9): a client's public key and its proof, 32 raw bytes each."""
    return frame(MessageType.KEY_PROOF, [key, mac])


def encode_cancel(ids: list[int]) -> bytes:
    return frame(MessageType.CANCEL, ids)


def encode_gossip(seq: int, msg: dict) -> bytes:
    kind = msg["type"]
    t = {v: k for k, v in GOSSIP_NAMES.items()}[kind]
    if kind in ("probe", "probe-req"):
        body = [seq, msg["from"], msg["target"], [encode_claim(c) for c in msg.get("updates", [])]]
    elif kind == "ack":
        body = [seq, msg["from"], [encode_claim(c) for c in msg.get("updates", [])]]
    elif kind == "nack":
        body = [seq, msg["from"]]
    else:
        body = [seq, msg["from"], [encode_claim(c) for c in msg["members"]]]
    return frame(t, body)


def encode_members_get(seq: int) -> bytes:
    return frame(MessageType.MEMBERS_GET, [seq])


def encode_members(seq: int, digest: int, members: list[dict]) -> bytes:
    return frame(MessageType.MEMBERS, [seq, digest, [encode_claim(c) for c in members]])


def encode_service_get(seq: int) -> bytes:
    return frame(MessageType.SERVICE_GET, [seq])


def encode_service(seq: int, descriptor: dict, features: int = 0, events: list | None = None, contracts: list | None = None) -> bytes:
    """SERVICE (4.8): the contracts element eighth (4.8.1), the events element ninth (4.11),
    each left out when none follows, nil when a later one does."""
    d = descriptor
    body = [seq, d["digest"], d["methods"], d["version"], d["labels"], d["capacity"], features]
    if events:
        body += [contracts, events]
    elif contracts:
        body.append(contracts)
    return frame(MessageType.SERVICE, body)


def encode_event(entries: list) -> bytes:
    return frame(MessageType.EVENT, entries)
