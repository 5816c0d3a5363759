"""The operations endpoint of `python -m zeromesh peer --http [HOST:]PORT`, as the Node peer's
(ops/http.js, ops/metrics.js): /metrics in Prometheus text format with the Node peer's metric
names and meanings (those that apply to a Python peer), /healthz (the event loop answers),
/readyz (joined and serving; 503 from the moment the peer drains, so a load balancer or
Kubernetes stops sending before it leaves). Served on the peer's own event loop, so /healthz
says the loop turns. Metrics are read from the peer's counters at each scrape; only the
latency histogram costs the request path anything, and only once this is on. It needs
prometheus_client (the `metrics` extra)."""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from .errors import InvalidArgumentError

log = logging.getLogger("zeromesh.ops")

# The Node peer's latency buckets (ops/histogram.js BOUNDS_MS), in seconds.
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
MAX_REQUEST_BYTES = 8192  # a request line and headers: anything longer is not a scrape


def prometheus() -> Any:
    try:
        import prometheus_client
    except ImportError as err:
        raise InvalidArgumentError("zeromesh: --http serves /metrics through prometheus_client: pip install 'zeromesh[metrics]'") from err
    return prometheus_client


def peer_registry(peer: Any, prefix: str = "zeromesh_peer_") -> Any:
    """A prometheus_client registry of `peer`'s metrics (and a histogram the peer observes into)."""
    pc = prometheus()
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    registry = pc.CollectorRegistry(auto_describe=False)
    latency = pc.Histogram(f"{prefix}request_duration_seconds", "Time from a request's arrival to its reply.", buckets=BUCKETS, registry=registry)
    peer.latency = latency.observe
    n = lambda x: prefix + x  # noqa: E731

    class PeerCollector:
        def collect(self):  # noqa: ANN202 - prometheus_client's interface
            s = peer.stats()
            c = CounterMetricFamily(n("requests"), "Requests received (entries of REQUEST frames).")
            c.add_metric([], s["requests"])
            yield c
            c = CounterMetricFamily(n("replies"), "Requests answered, by outcome.", labels=["outcome"])
            for outcome, key in (("ok", "ok"), ("remote_error", "errors"), ("unknown_method", "unknown"), ("busy", "busy"), ("draining", "drained"), ("invalid", "invalid"), ("cancelled", "cancelled")):
                c.add_metric([outcome], s[key])
            yield c
            by = s["by_method"]
            methods = sorted(set(peer.handlers) | set(by))
            for name, field, text in (("method_requests", "requests", "Requests answered for each method this peer serves."), ("method_errors", "errors", "Handler errors for each method this peer serves.")):
                c = CounterMetricFamily(n(name), text, labels=["method"])
                for m in methods:
                    c.add_metric([m], by.get(m, {}).get(field, 0))
                yield c
            c = CounterMetricFamily(n("handlers_overran"), "Handlers still running past their deadline and its grace in a thread, which cannot be stopped, holding a place until they return.")
            c.add_metric([], s["overran"])
            yield c
            c = CounterMetricFamily(n("deadlines_passed"), "Calls whose deadline passed: dropped while waiting for a worker, or stopped past it (worker replaced, coroutine cancelled).")
            c.add_metric([], s["expired"])
            yield c
            w = s.get("workers") or {}
            for name, kind, value, text in (
                ("inflight", GaugeMetricFamily, s["inflight"], "Requests running or waiting for a worker now."),
                ("queue_depth", GaugeMetricFamily, w.get("queued", 0), "Requests waiting for a worker process."),
                ("threads", GaugeMetricFamily, w.get("size", 0), "Worker processes running handlers (0: the event loop and threads)."),
                ("thread_crashes", CounterMetricFamily, w.get("crashed", 0), "Worker processes that crashed or exited (each replaced; the request it ran failed with ERR_ZEROMESH_WORKER_EXIT)."),
                ("workers_replaced", CounterMetricFamily, w.get("replaced", 0), "Worker processes replaced: crashed, or killed running a call past its deadline."),
                ("malformed", CounterMetricFamily, s["malformed"], "Frames that broke the wire format, or membership requests unsealed in a secured cluster."),
                ("ready", GaugeMetricFamily, 1 if peer.ready else 0, "1 when the peer has joined and serves; 0 from the moment it drains."),
            ):
                c = kind(n(name), text)
                c.add_metric([], value)
                yield c
            capacity = peer.descriptor["capacity"] or peer.max_inflight
            c = GaugeMetricFamily(n("saturation"), "Requests running or queued over what this peer runs at once (its capacity, else its workers, else max_inflight).")
            c.add_metric([], s["inflight"] / capacity)
            yield c
            counts = {"alive": 0, "suspect": 0, "dead": 0, "left": 0}
            for m in peer.members():
                counts[m["state"]] += 1
            c = GaugeMetricFamily(n("members"), "Members of the cluster by state, as this peer sees it (itself included).", labels=["state"])
            for state, v in counts.items():
                c.add_metric([state], v)
            yield c
            mc = s["membership"]
            for name, key, text in (("gossip_suspicions", "suspected", "Members this peer came to suspect (on its own probes or others' word)."),
                                    ("gossip_refutations", "refuted", "Suspicions of this peer it refuted."),
                                    ("gossip_deaths", "died", "Members this peer declared dead (its suspicion ran out).")):
                c = CounterMetricFamily(n(name), text)
                c.add_metric([], mc.get(key, 0))
                yield c
            c = GaugeMetricFamily(n("gossip_local_health"), "Lifeguard local health: 0 healthy, up to awareness_max when this peer's own probing looks unreliable.")
            c.add_metric([], peer.membership.health if peer.membership is not None else 0)
            yield c

    registry.register(PeerCollector())
    return registry


class OpsServer:
    """/metrics, /healthz and /readyz over HTTP/1.1 on the running loop (one request a connection)."""

    def __init__(self, peer: Any, host: str, port: int):
        self.peer, self.host, self.port = peer, host, port
        self.registry = peer_registry(peer)
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> int:
        try:
            self.server = await asyncio.start_server(self.serve, self.host, self.port)
        except OSError as err:
            raise InvalidArgumentError(f"zeromesh: cannot listen on --http {self.host}:{self.port}: {err.strerror or err}") from err
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            method, path = (line[0], line[1].split("?", 1)[0]) if len(line) >= 2 else ("", "")
            if method not in ("GET", "HEAD"):
                status, body, kind = 405, b"GET only\n", "text/plain"
            elif path == "/healthz":
                status, body, kind = 200, b"ok\n", "text/plain"
            elif path == "/readyz":
                status, body, kind = (200, b"ready\n", "text/plain") if self.peer.ready else (503, b"not ready\n", "text/plain")
            elif path == "/metrics":
                pc = prometheus()
                status, body, kind = 200, pc.generate_latest(self.registry), pc.CONTENT_TYPE_LATEST
            else:
                status, body, kind = 404, b"not found: /metrics, /healthz, /readyz\n", "text/plain"
            reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}[status]
            writer.write(f"HTTP/1.1 {status} {reason}\r\ncontent-type: {kind}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode("latin-1"))
            if method != "HEAD":
                writer.write(body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
            pass
        except Exception:  # noqa: BLE001 - a scrape that failed must not take the loop with it
            log.exception("the operations endpoint failed a request")
        finally:
            writer.close()
