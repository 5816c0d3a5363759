"""How a Python peer or client reaches other peers: a DEALER socket per endpoint (PROTOCOL.md
section 1 says a connecting side is free to choose; none of it is visible to a peer), and the
questions it asks them (PING, PROBE, PROBE_REQ, SYNC, MEMBERS_GET, SERVICE_GET) matched to
their answers by `seq`, with a timeout. Answers without a seq (REPLY) go to `on_reply`."""
from __future__ import annotations

import asyncio
import itertools
from typing import Callable

import zmq
import zmq.asyncio

from . import codec
from .constants import MessageType
from .errors import ProtocolError

HWM = 1000  # messages queued to one peer at most; past it a send is dropped (EAGAIN)


class Link:
    def __init__(self, ctx: zmq.asyncio.Context, *, on_reply: Callable[[str, dict], None] | None = None,
                 on_down: Callable[[str], None] | None = None, curve: dict | None = None,
                 max_message_size: int = 1048576):
        self.ctx = ctx
        self.on_reply = on_reply
        self.on_down = on_down
        self.curve = curve  # { server_key, public_key, secret_key } (bytes, Z85), or None: plain
        self.max_message_size = max_message_size
        self.sockets: dict[str, zmq.asyncio.Socket] = {}
        self.readers: dict[str, asyncio.Task] = {}
        self.asking: dict[int, tuple[str, asyncio.Future]] = {}
        self.seqs = itertools.count(1)
        self.closed = False

    def socket(self, ep: str) -> zmq.asyncio.Socket:
        s = self.sockets.get(ep)
        if s is None:
            s = self.ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.SNDHWM, HWM)
            s.setsockopt(zmq.SNDTIMEO, 0)
            s.setsockopt(zmq.MAXMSGSIZE, self.max_message_size)
            s.setsockopt(zmq.RECONNECT_IVL, 100)
            s.setsockopt(zmq.RECONNECT_IVL_MAX, 2000)
            if self.curve is not None:
                s.curve_serverkey = self.curve["server_key"]
                s.curve_publickey = self.curve["public_key"]
                s.curve_secretkey = self.curve["secret_key"]
            s.connect(ep)
            self.sockets[ep] = s
            self.readers[ep] = asyncio.ensure_future(self.read(ep, s))
        return s

    def send(self, ep: str, frame: bytes) -> bool:
        """Queues `frame` to `ep`; False when it could not be (closed, or the queue is full)."""
        if self.closed:
            return False
        try:
            self.socket(ep).send(frame, zmq.NOBLOCK)
            return True
        except zmq.ZMQError:
            return False

    async def ask(self, ep: str, make_frame: Callable[[int], bytes], timeout_ms: float) -> dict | None:
        """Sends the question `make_frame(seq)` makes to `ep`; its decoded answer, or None at the timeout."""
        seq = next(self.seqs)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self.asking[seq] = (ep, fut)
        try:
            if not self.send(ep, make_frame(seq)):
                return None
            return await asyncio.wait_for(fut, timeout_ms / 1000)
        except asyncio.TimeoutError:
            return None
        finally:
            self.asking.pop(seq, None)

    async def read(self, ep: str, s: zmq.asyncio.Socket) -> None:
        while not self.closed:
            try:
                frames = await s.recv_multipart()
            except (zmq.ZMQError, asyncio.CancelledError):
                return
            if len(frames) != 1:
                continue  # bulk frames are never asked for (4.2.1)
            try:
                msg = codec.decode(frames[0], self.max_message_size)
            except ProtocolError:
                continue
            if msg["type"] == MessageType.REPLY:
                if self.on_reply is not None:
                    self.on_reply(ep, msg)
                continue
            seq = msg.get("seq")
            waiting = self.asking.get(seq) if seq is not None else None
            if waiting is not None and waiting[0] == ep and not waiting[1].done():
                waiting[1].set_result(msg)  # only the endpoint asked answers its question

    def forget(self, ep: str) -> None:
        """Closes the connection to `ep` (a member reaped, a peer gone)."""
        s = self.sockets.pop(ep, None)
        task = self.readers.pop(ep, None)
        if task is not None:
            task.cancel()
        if s is not None:
            s.close(linger=0)

    async def close(self) -> None:
        self.closed = True
        for ep in list(self.sockets):
            self.forget(ep)
        for _, fut in self.asking.values():
            if not fut.done():
                fut.cancel()
