"""Which key a connection holds (PROTOCOL.md 4.9). A secured client proves its key on each new
connection: the peer's PONG carries a challenge (`ch`), and the client answers KEY_PROOF
[its public key, mac], mac = HMAC-SHA256(X25519(client secret, cluster public),
"zeromesh key proof v1" || ch). The peer computes the same secret as X25519(cluster secret,
client public). Keys here are 32 raw bytes.

X25519 is libsodium's `crypto_scalarmult` (the raw RFC 7748 secret, constant time), through
ctypes: the libsodium that pyzmq's wheels bundle beside libzmq, or the system's. Python's
standard library has no X25519, and a scalar multiplication written with Python integers would
not run in constant time on the cluster's secret key, which any client may make the peer use."""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import hashlib
import hmac
import os
import secrets

import zmq

from .errors import InvalidArgumentError

LABEL = b"zeromesh key proof v1"


def _find_sodium() -> ctypes.CDLL | None:
    here = os.path.dirname(zmq.__file__)
    bundled = [p for d in (os.path.join(here, "..", "pyzmq.libs"), os.path.join(here, ".dylibs"))
               for p in sorted(glob.glob(os.path.join(d, "*sodium*")))]
    system = ctypes.util.find_library("sodium")
    for path in bundled + ([system] if system else []):
        try:
            lib = ctypes.CDLL(path)
            if lib.sodium_init() < 0:
                continue
            lib.crypto_scalarmult.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
            lib.crypto_scalarmult.restype = ctypes.c_int
            return lib
        except (OSError, AttributeError):
            continue
    return None


_sodium: ctypes.CDLL | None = None


def sodium() -> ctypes.CDLL:
    """libsodium, loaded once; a clear error where there is none (pip install pyzmq's wheel, or libsodium)."""
    global _sodium
    if _sodium is None:
        _sodium = _find_sodium()
        if _sodium is None:
            raise InvalidArgumentError("zeromesh: key proofs (a secured client or peer) need libsodium: pyzmq's wheels bundle it; with a pyzmq built from source, install libsodium (Debian: libsodium23)")
    return _sodium


def x25519(secret: bytes, public: bytes) -> bytes | None:
    """The raw 32-byte X25519 secret of RFC 7748; None for a key that gives none (a low-order point)."""
    if len(secret) != 32 or len(public) != 32:
        return None
    out = ctypes.create_string_buffer(32)
    if sodium().crypto_scalarmult(out, secret, public) != 0:
        return None
    return out.raw


def key_proof(own_secret: bytes, other_public: bytes, ch: bytes) -> bytes | None:
    """The proof for challenge `ch`: a client's with its secret key and the cluster's public key,
    a peer's with the cluster's secret key and the client's public key."""
    shared = x25519(own_secret, other_public)
    return None if shared is None else hmac.new(shared, LABEL + ch, hashlib.sha256).digest()


def check_key_proof(cluster_secret: bytes, client_public: bytes, ch: bytes, mac: bytes) -> bool:
    """Whether `mac` is the proof of `client_public` for `ch` (constant time)."""
    expected = key_proof(cluster_secret, client_public, ch)
    return expected is not None and isinstance(mac, bytes) and hmac.compare_digest(expected, mac)


def new_challenge() -> bytes:
    return secrets.token_bytes(16)
