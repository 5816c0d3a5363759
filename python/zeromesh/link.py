"""How a Python peer or client reaches other peers: a DEALER socket per endpoint (PROTOCOL.md
section 1 says a connecting side is free to choose; none of it is visible to a peer), and the
questions it asks them (PING, PROBE, PROBE_REQ, SYNC, MEMBERS_GET, SERVICE_GET) matched to
their answers by `seq`, with a timeout. Answers without a seq (REPLY) go to `on_reply`.

With `prove` (a secured client, PROTOCOL.md 4.9), each connection is held at every handshake
(the first and each reconnect, as ZeroMQ's monitor reports them) until `prove(endpoint)` has
sent the key proof: what is sent meanwhile waits in order, so the peer knows the connection's
key before it is asked for work."""
from __future__ import annotations

import asyncio
import itertools
from typing import Awaitable, Callable

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from . import codec
from .constants import MessageType
from .errors import ProtocolError

HWM = 1000  # messages queued to one peer at most; past it a send is dropped (EAGAIN)


class Link:
    def __init__(self, ctx: zmq.asyncio.Context, *, on_reply: Callable[[str, dict], None] | None = None,
                 on_down: Callable[[str], None] | None = None, curve: dict | None = None,
                 max_message_size: int = 1048576, prove: Callable[[str], Awaitable[None]] | None = None):
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
        self.prove = prove
        self.held: dict[str, list[bytes]] = {}  # frames waiting for a connection's proof
        self.monitors: dict[str, tuple[zmq.asyncio.Socket, asyncio.Task]] = {}

    def socket(self, ep: str) -> zmq.asyncio.Socket:
        s = self.sockets.get(ep)
        if s is None:
            s = self.ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.SNDHWM, HWM)
            s.setsockopt(zmq.SNDTIMEO, 0)
            s.setsockopt(zmq.MAXMSGSIZE, self.max_message_size)
            # As the Node client (transport/settings.js): a peer restarted in place is found
            # within 250 ms of its binding.
            s.setsockopt(zmq.RECONNECT_IVL, 100)
            s.setsockopt(zmq.RECONNECT_IVL_MAX, 250)
            if self.curve is not None:
                s.curve_serverkey = self.curve["server_key"]
                s.curve_publickey = self.curve["public_key"]
                s.curve_secretkey = self.curve["secret_key"]
            if self.prove is not None:
                self.held[ep] = []
                monitor = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
                self.monitors[ep] = (monitor, asyncio.ensure_future(self.handshakes(ep, monitor)))
            s.connect(ep)
            self.sockets[ep] = s
            self.readers[ep] = asyncio.ensure_future(self.read(ep, s))
        return s

    async def handshakes(self, ep: str, monitor: zmq.asyncio.Socket) -> None:
        """At each handshake with `ep`: hold what is sent, prove the key, send what was held."""
        while not self.closed:
            try:
                parse_monitor_message(await monitor.recv_multipart())
            except (zmq.ZMQError, asyncio.CancelledError, ValueError):
                return
            if self.held.get(ep) is None:
                self.held[ep] = []
            try:
                await self.prove(ep)
            finally:
                waiting = self.held.pop(ep, None) or []
                for frame in waiting:
                    self.send(ep, frame)

    def send(self, ep: str, frame: bytes, *, now: bool = False) -> bool:
        """Queues `frame` to `ep` (behind a proof on its way, unless `now`); False when it could not be (closed, or the queue is full)."""
        if self.closed:
            return False
        s = self.socket(ep)
        held = None if now else self.held.get(ep)
        if held is not None:
            if len(held) >= HWM:
                return False
            held.append(frame)
            return True
        try:
            s.send(frame, zmq.NOBLOCK)
            return True
        except zmq.ZMQError:
            return False

    async def ask(self, ep: str, make_frame: Callable[[int], bytes], timeout_ms: float, *, now: bool = False) -> dict | None:
        """Sends the question `make_frame(seq)` makes to `ep`; its decoded answer, or None at the timeout."""
        seq = next(self.seqs)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self.asking[seq] = (ep, fut)
        try:
            if not self.send(ep, make_frame(seq), now=now):
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
        self.held.pop(ep, None)
        monitor = self.monitors.pop(ep, None)
        if monitor is not None:
            monitor[1].cancel()
            if s is not None:
                s.disable_monitor()
            monitor[0].close(linger=0)
        if s is not None:
            s.close(linger=0)

    async def close(self) -> None:
        self.closed = True
        for ep in list(self.sockets):
            self.forget(ep)
        for _, fut in self.asking.values():
            if not fut.done():
                fut.cancel()
