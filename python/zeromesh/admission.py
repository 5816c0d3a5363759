"""Whether the peer takes new work now: one decision for every kind of work (a request, an
event's delivery), as the Node peer's peer/admission.js. In order:
  - a draining peer takes nothing new (DRAINING: the client goes elsewhere);
  - a method it does not serve, or an event it has no subscription to, never (UNKNOWN_METHOD);
  - a place among the work in flight (max_inflight) must be free (BUSY);
  - and work that runs in the worker processes must find a place there: one running on each
    worker, and waiting at most max_queue, fewer while max_queue_ms bounds the queue by the
    measured time per call (worker_pool.py places) (BUSY).
What it takes it holds until release(); the count of what is held is the peer's load (replies
carry it; clients balance on it)."""
from __future__ import annotations

import asyncio
from typing import Any

from .constants import Status

DRAINING = (Status.DRAINING, "peer is draining")
UNKNOWN = (Status.UNKNOWN_METHOD, None)


class Admission:
    def __init__(self, *, max_inflight: int, counts: dict, pool: Any = None, max_queue: int = 0, max_queue_ms: int = 0):
        self.max_inflight = max_inflight
        self.counts = counts  # the peer's: drained, unknown, busy
        self.pool = pool
        self.max_queue, self.max_queue_ms = max_queue, max_queue_ms
        self.draining = False
        self.inflight = 0  # places held: work running, or waiting for a worker
        self.idle = asyncio.Event()  # set whenever nothing is held

    def verdict(self, known: bool, pooled: bool) -> tuple[int, str | None] | None:
        """None (taken: hold a place, release() it when over), or the refusal (status, message;
        for UNKNOWN_METHOD the message is None: the caller names what it does not serve)."""
        if self.draining:
            self.counts["drained"] += 1
            return DRAINING
        if not known:
            self.counts["unknown"] += 1
            return UNKNOWN
        if self.inflight >= self.max_inflight:
            self.counts["busy"] += 1
            return Status.BUSY, f"peer busy: {self.inflight} requests in flight"
        if pooled and self.pool is not None:
            places = self.pool.places(self.max_queue, self.max_queue_ms)
            if self.pool.load >= places:
                self.counts["busy"] += 1
                size = self.pool.size
                bound = " (max_queue_ms of work queued)" if places < size + self.max_queue else ""
                return Status.BUSY, f"peer busy: {self.pool.load} calls running or waiting for {size} worker{'s' if size != 1 else ''}, {places} places{bound}"
        self.inflight += 1
        self.idle.clear()
        return None

    def release(self) -> None:
        self.inflight -= 1
        if self.inflight == 0:
            self.idle.set()
