"""Endpoints (PROTOCOL.md 1.1): parsed strictly, in normal form, before ZeroMQ sees them."""
from __future__ import annotations

import ipaddress
import re

MAX_ENDPOINT_BYTES = 240
MAX_IPC_PATH_BYTES = 107
_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_PORT = re.compile(r"^(?:0|[1-9][0-9]{0,4})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def parse_endpoint(ep: object, bind: bool = False) -> tuple[str | None, str | None]:
    """(normal form, None), or (None, what is wrong). With `bind`, wildcards and port 0 are allowed."""
    if not isinstance(ep, str) or not ep:
        return None, "is not a non-empty string"
    if len(ep.encode()) > MAX_ENDPOINT_BYTES:
        return None, f"is longer than {MAX_ENDPOINT_BYTES} bytes"
    if _CONTROL.search(ep):
        return None, "has a control character"
    scheme, sep, rest = ep.partition("://")
    if not sep:
        return None, "is not tcp://HOST:PORT, ipc://PATH or inproc://NAME"
    if scheme == "ipc":
        if not rest or rest == "@":
            return None, "has no path"
        if len(rest.encode()) > MAX_IPC_PATH_BYTES:
            return None, f"has an ipc path longer than {MAX_IPC_PATH_BYTES} bytes"
        if rest == "*" and not bind:
            return None, "is not an address to connect to (wildcard ipc path)"
        return ep, None
    if scheme == "inproc":
        return (ep, None) if rest else (None, "has no name")
    if scheme != "tcp":
        return None, "is not tcp://HOST:PORT, ipc://PATH or inproc://NAME"
    host, colon, port_text = rest.rpartition(":")
    if not colon or not host:
        return None, "has no :PORT"
    if port_text == "*":
        if not bind:
            return None, "is not an address to connect to (wildcard port)"
    else:
        if not _PORT.match(port_text) or int(port_text) > 65535:
            return None, "has a port that is not a number from 1 to 65535"
        if int(port_text) == 0 and not bind:
            return None, "is not an address to connect to (port 0)"
    wildcard = False
    if host == "localhost":
        host = "127.0.0.1"
    if host.startswith("["):
        inner = host[1:-1] if host.endswith("]") else None
        try:
            ipaddress.IPv6Address((inner or "").split("%")[0])
        except ValueError:
            return None, "has a bracketed host that is not an IPv6 address"
        wildcard = host == "[::]"
    elif host == "*":
        wildcard = True
    elif re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return None, "has a host that is not a valid IPv4 address"
        wildcard = host == "0.0.0.0"
    elif not _is_hostname(host):
        return None, "has a host that is not a DNS name, an IPv4 address or a bracketed IPv6 address"
    if wildcard and not bind:
        return None, "is not an address to connect to (wildcard host)"
    normal = f"tcp://{host}:{port_text}"
    if len(normal.encode()) > MAX_ENDPOINT_BYTES:
        return None, f"is longer than {MAX_ENDPOINT_BYTES} bytes"
    return normal, None


def _is_hostname(host: str) -> bool:
    if len(host) > 253:
        return False
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    return all(_LABEL.match(label) for label in labels)


def is_wire_endpoint(v: object) -> bool:
    """Whether `v`, as it came off the wire, is a connectable endpoint already in normal form."""
    normal, _ = parse_endpoint(v)
    return normal is not None and normal == v


def normalize_remote(ep: object, what: str = "endpoint") -> str:
    """An endpoint to connect to, in normal form; raises InvalidArgumentError otherwise."""
    from .errors import InvalidArgumentError

    normal, why = parse_endpoint(ep)
    if normal is None:
        raise InvalidArgumentError(f"zeromesh: {what} {ep!r} {why}; use tcp://HOST:PORT such as tcp://127.0.0.1:5555")
    return normal


def normalize_bind(ep: object, what: str = "bind") -> str:
    from .errors import InvalidArgumentError

    normal, why = parse_endpoint(ep, bind=True)
    if normal is None:
        raise InvalidArgumentError(f"zeromesh: {what} {ep!r} {why}; use tcp://HOST:PORT such as tcp://127.0.0.1:0")
    return normal


def is_loopback(ep: str) -> bool:
    scheme, _, rest = ep.partition("://")
    if scheme in ("ipc", "inproc"):
        return True
    host = rest.rpartition(":")[0].strip("[]").split("%")[0]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def host_of(endpoint: str) -> str:
    """The host of a tcp:// endpoint ("tcp://10.0.0.1:5555" -> "10.0.0.1", an IPv6 one in brackets);
    any other endpoint is its own (the Node protocol/endpoint.js hostOf)."""
    if not endpoint.startswith("tcp://"):
        return endpoint
    host, colon, _ = endpoint[6:].rpartition(":")
    return host if colon and host else endpoint
