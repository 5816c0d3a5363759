"""What a peer serves (PROTOCOL.md 4.8): its service descriptor, checked, and its digest; the
hash of the wire's digests, FNV-1a over UTF-16 code units (4.6, 4.8)."""
from __future__ import annotations

import re
from typing import Any

from .constants import Limits
from .errors import ProtocolError

_LABEL_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
MAX_LABEL_LENGTH = 63


def fnv1a(text: str) -> int:
    """FNV-1a (offset basis 0x811c9dc5, prime 0x01000193) of `text`'s UTF-16 code units, as a uint32."""
    h = 0x811C9DC5
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = ((h ^ (units[i] | units[i + 1] << 8)) * 0x01000193) & 0xFFFFFFFF
    return h


def by_code_units(s: str) -> bytes:
    """A sort key that orders strings by their UTF-16 code units, as JavaScript compares them."""
    return s.encode("utf-16-be")


def service_digest(methods: list[str], version: str | None, labels: dict[str, str], capacity: int | None) -> int:
    m = "\n".join(sorted(methods, key=by_code_units))
    lab = "\n".join(f"{k}={labels[k]}" for k in sorted(labels, key=by_code_units))
    return fnv1a(f"{m}\0{version or ''}\0{lab}\0{'' if capacity is None else capacity}\0")


def descriptor_problem(methods: Any, version: Any, labels: Any, capacity: Any) -> str | None:
    """None when the fields make a descriptor within the limits of 3.3, else why not."""
    if not isinstance(methods, list) or len(methods) > Limits.max_methods:
        return f"methods must be a list of at most {Limits.max_methods} names"
    seen = set()
    for name in methods:
        if not isinstance(name, str) or not 0 < len(name.encode("utf-16-le")) // 2 <= Limits.max_method_length or name in seen:
            return f"method {name!r} is not a name of 1 to {Limits.max_method_length} characters, or is there twice"
        seen.add(name)
    if version is not None and (not isinstance(version, str) or len(version) > Limits.max_version_length or not _SEMVER.match(version)):
        return f"version {version!r} is not a semantic version of at most {Limits.max_version_length} characters"
    if not isinstance(labels, dict) or len(labels) > Limits.max_labels:
        return f"labels must be a map of at most {Limits.max_labels} entries"
    for k, v in labels.items():
        if not isinstance(k, str) or len(k) > MAX_LABEL_LENGTH or not _LABEL_KEY.match(k):
            return f"label key {k!r} must be 1 to {MAX_LABEL_LENGTH} letters, digits, '.', '_', '/' or '-'"
        if not isinstance(v, str) or len(v) > MAX_LABEL_LENGTH or _CONTROL.search(v) or "," in v:
            return f"label {k} must be a string of at most {MAX_LABEL_LENGTH} characters without commas or control characters"
    if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int) or not 1 <= capacity <= 2**31 - 1):
        return "capacity must be a whole number from 1 to 2^31-1, or None"
    return None


def read_descriptor(methods: Any, version: Any, labels: Any, capacity: Any) -> dict:
    """The descriptor fields of a SERVICE answer, checked (raises ProtocolError)."""
    if isinstance(capacity, float) and capacity.is_integer():
        capacity = int(capacity)
    why = descriptor_problem(methods, version, labels, capacity)
    if why is not None:
        raise ProtocolError(f"zeromesh protocol: a service answer's {why}")
    return {"methods": list(methods), "version": version, "labels": dict(labels), "capacity": capacity}


def describe(methods: list[str], version: str | None = None, labels: dict | None = None, capacity: int | None = None) -> dict:
    """A descriptor as it travels: methods in code-unit order, and its digest."""
    labels = dict(labels or {})
    return {
        "methods": sorted(methods, key=by_code_units),
        "version": version,
        "labels": labels,
        "capacity": capacity,
        "digest": service_digest(methods, version, labels, capacity),
    }
