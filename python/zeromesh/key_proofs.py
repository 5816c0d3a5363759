"""Which allowed key each client connection of a secured peer holds, as the clients prove it
(key_proof.py, PROTOCOL.md 4.9), so that revoking a key cuts its open connections: once the
allow-list no longer holds a key, the connections that proved it get no more answers, and so
do the connections seen that proved no key still allowed (any of them may hold the revoked
one). A connection that sent a good seal is a member's, never cut; one that proves an allowed
key, or seals, after a cut is answered again (a client whose proof was on its way). When a key
is revoked while connections that asked for work without a proof (an older client) were about
in the last ten minutes, revoke() says every connection must be closed: the only way ZeroMQ
offers, after which clients reconnect and the handshake refuses the revoked key.

A connection is its ROUTER routing id. At most `limit` unproven connections are remembered
(the oldest forgotten first), as the Node peer does."""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from zmq.utils import z85

from .key_proof import check_key_proof, new_challenge

ASKED_WINDOW_S = 600  # requests without a proof this recent make a revocation close every connection
UNPROVEN_LIMIT = 65536


class Connection:
    __slots__ = ("challenge", "proven", "cut", "member", "seen", "asked_at")

    def __init__(self) -> None:
        self.challenge: bytes | None = None
        self.proven: str | None = None  # the allowed key it proved (Z85)
        self.cut = False
        self.member = False
        self.seen = False
        self.asked_at = float("-inf")


class KeyProofs:
    def __init__(self, cluster_secret: bytes, cluster_public: str, allowed: Callable[[], set[str]], limit: int = UNPROVEN_LIMIT):
        self.cluster_secret = cluster_secret
        self.cluster_public = cluster_public  # a member's own client proves it: never cut
        self.allowed = allowed
        self.last_allowed = set(allowed())
        self.limit = limit
        self.conns: OrderedDict[bytes, Connection] = OrderedDict()
        self.counts = {"proofs": 0, "bad_proofs": 0, "cut_connections": 0, "cut_unproven": 0, "uncut": 0, "cut_frames": 0, "resets": 0}

    def of(self, cid: bytes) -> Connection:
        conn = self.conns.get(cid)
        if conn is None:
            conn = self.conns[cid] = Connection()
            if len(self.conns) > self.limit:
                self.forget_oldest_unproven()
        return conn

    def forget_oldest_unproven(self) -> None:
        for cid, conn in self.conns.items():
            if conn.proven is None and not conn.member and not conn.cut:
                del self.conns[cid]
                return

    def is_cut(self, cid: bytes) -> bool:
        conn = self.conns.get(cid)
        return conn is not None and conn.cut

    def seen(self, cid: bytes) -> None:
        """A message other than a seal or a proof: remembered until the connection proves a key."""
        conn = self.of(cid)
        if conn.proven is None and not conn.member:
            conn.seen = True

    def asked(self, cid: bytes, now: float) -> None:
        conn = self.of(cid)
        if conn.proven is None and not conn.member:
            conn.asked_at = now

    def member(self, cid: bytes) -> None:
        conn = self.of(cid)
        conn.member, conn.seen = True, False
        if conn.cut:
            conn.cut = False
            self.counts["uncut"] += 1

    def challenge(self, cid: bytes) -> bytes:
        conn = self.of(cid)
        conn.challenge = new_challenge()
        return conn.challenge

    def prove(self, cid: bytes, key: bytes, mac: bytes) -> bool:
        conn = self.of(cid)
        ch = conn.challenge
        if ch is None or not check_key_proof(self.cluster_secret, key, ch, mac):
            self.counts["bad_proofs"] += 1
            return False
        conn.challenge = None
        text = z85.encode(key).decode()
        if text == self.cluster_public:
            self.member(cid)
            self.counts["proofs"] += 1
            return True
        if text not in self.allowed():
            self.counts["bad_proofs"] += 1
            return False
        conn.proven, conn.seen, conn.asked_at = text, False, float("-inf")
        if conn.cut:
            conn.cut = False
            self.counts["uncut"] += 1
        self.counts["proofs"] += 1
        return True

    def revoke(self, allowed: set[str], now: float) -> bool:
        """The allow-list is now `allowed`: cuts what it must; True when every connection must be closed too."""
        removed = bool(self.last_allowed - allowed)
        self.last_allowed = set(allowed)
        close_all = False
        for conn in self.conns.values():
            if conn.proven is not None:
                if conn.proven in allowed:
                    continue
                conn.proven, conn.cut = None, True
                self.counts["cut_connections"] += 1
            elif removed and not conn.member:
                if conn.seen:
                    conn.seen, conn.cut = False, True
                    self.counts["cut_unproven"] += 1
                if now - conn.asked_at < ASKED_WINDOW_S:
                    close_all = True
        return close_all

    def reset(self) -> None:
        """Every connection was closed: all are forgotten."""
        self.conns.clear()
        self.counts["resets"] += 1

    def stats(self) -> dict:
        proven = sum(1 for c in self.conns.values() if c.proven is not None)
        cut = sum(1 for c in self.conns.values() if c.cut)
        return {**self.counts, "proven": proven, "cut": cut}
