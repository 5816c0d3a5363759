"""Requests a peer ran recently, per client connection and id, so a request delivered twice (a
client's retry that comes back, a hedge) runs once (PROTOCOL.md section 5): a duplicate of a
running request is dropped, one of a finished request gets the same reply frame again. Kept
in two generations swapped every half window (10 s) or when the newer holds its share, so an
id is remembered for between half a window and a whole one, less under load; refusals are
forgotten (a refused request may come back)."""
from __future__ import annotations

import time


class ClientRequests:
    def __init__(self, owner: "RecentRequests"):
        self.owner = owner
        self.current: dict[int, object] = {}
        self.previous: dict[int, object] = {}
        self.generation = owner.generation

    def catch_up(self) -> None:
        g = self.owner.generation
        if self.generation != g:
            self.previous = self.current if self.generation == g - 1 else {}
            self.current = {}
            self.generation = g

    def begin(self, rid: int) -> object:
        """None (run it), RUNNING (drop it), or the reply frame to send again."""
        for table in (self.current, self.previous):
            if rid in table:
                return table[rid]
        self.owner.count += 1
        self.current[rid] = RecentRequests.RUNNING
        return None

    def forget(self, rid: int) -> None:
        self.current.pop(rid, None)
        self.previous.pop(rid, None)

    def finish(self, rid: int, frame: bytes) -> None:
        table = self.current if rid in self.current else self.previous if rid in self.previous else None
        if table is not None:
            table[rid] = frame


class RecentRequests:
    RUNNING = object()

    def __init__(self, window_ms: int = 10000, max_requests: int = 20000):
        self.half = window_ms / 2000
        self.max_per_generation = max(1, max_requests // 2)
        self.generation = 0
        self.count = 0
        self.since = time.monotonic()
        self.by_connection: dict[bytes, ClientRequests] = {}

    def of(self, cid: bytes) -> ClientRequests:
        if time.monotonic() - self.since >= self.half or self.count >= self.max_per_generation:
            self.rotate()
        c = self.by_connection.get(cid)
        if c is None:
            c = self.by_connection[cid] = ClientRequests(self)
        c.catch_up()
        return c

    def rotate(self) -> None:
        self.generation += 1
        self.count = 0
        self.since = time.monotonic()
        for cid, c in list(self.by_connection.items()):
            if c.generation < self.generation - 1:
                del self.by_connection[cid]
