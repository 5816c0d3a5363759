"""A secured cluster (PROTOCOL.md 1.2, 4.7): CURVE on every connection with the cluster's
keypair, which every peer holds; a ZAP handler on a peer's bound socket that lets in the
cluster key and the client keys of its allow-list and nothing else (400); and membership
requests sealed with an HMAC-SHA256 tag under a key derived from the cluster's secret key, so
a client's key, which may connect, can never speak for a member. Keys are Z85 text (40
characters), as `zeromesh keygen` writes them (PREFIX.key, PREFIX.pub)."""
from __future__ import annotations

import hashlib
import hmac
import os
import stat
import threading

import zmq
from zmq.utils import z85

from .constants import MessageType
from .errors import InvalidArgumentError

INFO = b"zeromesh gossip seal v1"
ZAP_ENDPOINT = "inproc://zeromq.zap.01"
ZAP_DOMAIN = b"zeromesh"


def key_text(v: str, kind: str, what: str) -> str:
    """A Z85 key, given as its text or as the path of a file holding it (a secret's not readable by others)."""
    text = v.strip()
    if len(text) != 40 and os.path.exists(v):
        if kind == "secret" and os.stat(v).st_mode & (stat.S_IRWXO | stat.S_IWGRP):
            raise InvalidArgumentError(f"zeromesh: {what} {v} can be read or written by others: chmod 600 it")
        with open(v) as f:
            text = f.read().strip()
    try:
        if len(text) != 40 or len(z85.decode(text.encode())) != 32:
            raise ValueError
    except ValueError:
        raise InvalidArgumentError(f"zeromesh: {what} is not a Z85 {kind} key of 40 characters (zeromesh keygen PREFIX writes them)") from None
    return text


def read_public_keys(items: list[str]) -> set[str]:
    """An allow-list's keys: each item a key (Z85), a `.pub` file, or a directory whose `.pub`
    files are read (others ignored), as the Node peer reads it. A file that is not a key is an
    error, so a typo never silently shuts clients out or lets them in."""
    keys: set[str] = set()
    for item in items:
        if os.path.isdir(item):
            for name in sorted(os.listdir(item)):
                if name.endswith(".pub"):
                    keys.add(key_text(os.path.join(item, name), "public", "allow-list file"))
        else:
            keys.add(key_text(item, "public", "an allowed key"))
    return keys


def public_of(secret: str) -> str:
    return zmq.curve_public(secret.encode()).decode()


def seal_key(cluster_secret: str) -> bytes:
    """HKDF-SHA256 (RFC 5869) of the secret key's 32 raw bytes, empty salt, the seal's info, 32 bytes."""
    prk = hmac.new(b"\x00" * 32, z85.decode(cluster_secret.encode()), hashlib.sha256).digest()
    return hmac.new(prk, INFO + b"\x01", hashlib.sha256).digest()


def seal(key: bytes, frame: bytes) -> bytes:
    from .codec import frame as make_frame

    return make_frame(MessageType.SEALED, [hmac.new(key, frame, hashlib.sha256).digest(), frame])


def unseal(key: bytes, tag: bytes, inner: bytes) -> bytes | None:
    good = hmac.new(key, inner, hashlib.sha256).digest()
    return inner if isinstance(tag, bytes) and hmac.compare_digest(good, tag) else None


class Security:
    """A peer's security: its cluster keypair, its allow-list (read again by reload()), its seal key."""

    def __init__(self, cluster_key: str, allow: list[str] | None = None):
        self.secret = key_text(cluster_key, "secret", "the cluster key")
        self.public = public_of(self.secret)
        self.secret_raw = z85.decode(self.secret.encode())
        self.allow_items = list(allow or [])
        self.allowed = read_public_keys(self.allow_items)
        self.seal_key = seal_key(self.secret)

    def reload(self) -> set[str]:
        """Reads the allow-list's items again; the handshakes let in exactly those keys from now
        on. A bad item raises and leaves the list as it was."""
        self.allowed = read_public_keys(self.allow_items)
        return self.allowed

    def fingerprint(self) -> str:
        """Changes when any file or directory of the allow-list does (a Kubernetes Secret's update sends no signal)."""
        parts = []
        for item in self.allow_items:
            try:
                st = os.stat(item)
            except OSError as err:
                parts.append(f"{item}:{err.errno}")
                continue
            parts.append(f"{item}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
            if os.path.isdir(item):
                for name in sorted(os.listdir(item)):
                    if name.endswith(".pub"):
                        try:
                            s = os.stat(os.path.join(item, name))
                            parts.append(f"{name}:{s.st_ino}:{s.st_size}:{s.st_mtime_ns}")
                        except OSError as err:
                            parts.append(f"{name}:{err.errno}")
        return "|".join(parts)

    def server_options(self, s: zmq.Socket) -> None:
        s.curve_server = True
        s.curve_secretkey = self.secret.encode()
        s.curve_publickey = self.public.encode()
        s.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN)
        s.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)  # no handler: the handshake fails, never passes

    def member_credentials(self) -> dict:
        """What the peer's connecting socket presents: the cluster keypair, expecting the cluster's key."""
        return {"server_key": self.public.encode(), "public_key": self.public.encode(), "secret_key": self.secret.encode()}

    def allows(self, mechanism: bytes, credentials: list[bytes]) -> bool:
        if mechanism != b"CURVE" or not credentials:
            return False
        key = z85.encode(credentials[0]).decode()
        return key == self.public or key in self.allowed


class ZapHandler:
    """The ZAP handler (RFC 27) of a context, bound before any server socket, in a thread of its own."""

    def __init__(self, ctx: zmq.Context, security: Security):
        self.security = security
        self.sock = ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(ZAP_ENDPOINT)
        self.stopping = False
        self.counts = {"allowed": 0, "refused": 0}
        self.thread = threading.Thread(target=self.run, name="zeromesh-zap", daemon=True)
        self.thread.start()

    def run(self) -> None:
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        while not self.stopping:
            try:
                if not poller.poll(100):
                    continue
                msg = self.sock.recv_multipart()
            except zmq.ZMQError:
                return
            # [peer, '', version, request id, domain, address, identity, mechanism, credentials...]
            if len(msg) < 8:
                continue  # not a ZAP request: ignored, and the handler goes on for the next handshake
            peer, _, version, rid, _domain, _address, _identity, mechanism, *credentials = msg
            ok = self.security.allows(mechanism, credentials)
            self.counts["allowed" if ok else "refused"] += 1
            reply = [peer, b"", version, rid, b"200" if ok else b"400", b"OK" if ok else b"key not allowed", b"", b""]
            try:
                self.sock.send_multipart(reply)
            except zmq.ZMQError:
                return

    def close(self) -> None:
        self.stopping = True
        self.thread.join(timeout=2)
        self.sock.close(linger=0)
