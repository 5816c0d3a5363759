"""python -m zeromesh peer --bind EP --seeds EP,EP --handlers pkg.module [--workers N] [--labels k=v,k=v]

Prints the peer's endpoint on stdout once it serves, logs on stderr; SIGTERM and SIGINT drain
it and exit 0. A bad flag or a module that cannot be loaded is a clear error and exit 2."""
from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import signal
import sys

from ._version import __version__
from .errors import InvalidArgumentError
from .logs import configure as configure_logs
from .peer import Peer


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit 2 with our wording, never argparse's own exit
        raise UsageError(message)


def labels_of(text: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in [p.strip() for p in (text or "").split(",") if p.strip()]:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise UsageError(f"--labels takes KEY=VALUE pairs, comma-separated, such as zone=a; got {pair!r}")
        out[key] = value
    return out


def http_of(text: str) -> tuple[str, int]:
    """--http PORT or HOST:PORT ([::1]:PORT for IPv6); the host is 127.0.0.1 unless given."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--http must be PORT or HOST:PORT, such as 9090 or 0.0.0.0:9090, got {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def security_of(args: argparse.Namespace) -> dict | None:
    if args.cluster_key is None:
        if args.allow is not None:
            raise UsageError("--allow needs --cluster-key: the allow-list is checked at CURVE handshakes")
        return None
    if args.insecure:
        raise UsageError("--insecure runs plain: it goes with neither --cluster-key nor --allow")
    return {"cluster_key": args.cluster_key, "allow": [a.strip() for a in (args.allow or "").split(",") if a.strip()]}


def parser() -> Parser:
    p = Parser(prog="python -m zeromesh", description="zeromesh for Python")
    p.add_argument("--version", action="version", version=__version__, help="print the version (the npm package's) and exit")
    sub = p.add_subparsers(dest="command")
    peer = sub.add_parser("peer", help="run a peer until SIGTERM")
    peer.add_argument("--bind", default="tcp://127.0.0.1:0", help="endpoint to bind (port 0: an ephemeral port)")
    peer.add_argument("--advertise", help="endpoint others should use, when it differs from --bind")
    peer.add_argument("--seeds", default="", help="peers to join through, comma-separated")
    peer.add_argument("--handlers", help="an importable module whose public functions are the methods, or whose `handlers` dict is (a contract's dotted names: implement(contract, {...}))")
    peer.add_argument("--workers", type=int, default=0, help="processes running the handlers (0: a thread)")
    peer.add_argument("--max-queue", type=int, help="with --workers: calls waiting for a worker before new ones are answered busy (default 64 x workers)")
    peer.add_argument("--max-queue-ms", type=int, help="with --workers: calls waiting are also at most this many ms of work, by the measured time per call (default 100)")
    peer.add_argument("--max-inflight", type=int, help="calls held at once before new ones are answered busy (default: workers + max queue with --workers, else 1024)")
    peer.add_argument("--capacity", type=int, help="calls this peer runs at full speed at once, stated in its service (default: --workers, else none)")
    peer.add_argument("--labels", help="KEY=VALUE,KEY=VALUE stated in the peer's service (zone=a)")
    peer.add_argument("--service-version", help="the service's semantic version")
    peer.add_argument("--drain-timeout", type=int, default=10000, help="ms a stop waits for requests in flight")
    peer.add_argument("--cluster-key", help="the cluster's secret key file (PREFIX.key of zeromesh keygen): CURVE on every connection")
    peer.add_argument("--allow", help="client public keys let in, comma-separated: keys, PREFIX.pub files, or directories of .pub files; read again on SIGHUP and when they change")
    peer.add_argument("--insecure", action="store_true", help="plain traffic off loopback, on purpose (no CURVE in this version)")
    peer.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    peer.add_argument("--log-format", default="text", choices=["text", "json"], help="logs on stderr as text lines, or JSON lines (one object a line)")
    peer.add_argument("--http", help="[HOST:]PORT: serve /metrics (Prometheus), /healthz and /readyz there (HOST 127.0.0.1 unless given; needs zeromesh[metrics])")
    return p


async def run_peer(args: argparse.Namespace) -> int:
    handlers = {}
    if args.handlers:
        try:
            handlers = importlib.import_module(args.handlers)
        except Exception as err:  # ImportError, SyntaxError, whatever the module raised
            raise UsageError(f"--handlers {args.handlers}: cannot import it: {type(err).__name__}: {err}") from err
    peer = Peer(bind=args.bind, advertise=args.advertise, seeds=args.seeds, handlers=handlers, workers=args.workers,
                labels=labels_of(args.labels), service_version=args.service_version, drain_timeout=args.drain_timeout,
                max_queue=args.max_queue, max_queue_ms=args.max_queue_ms, max_inflight=args.max_inflight, capacity=args.capacity,
                insecure=args.insecure, security=security_of(args))
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    if peer.security is not None:  # SIGHUP reads the allow-list again (its files are also watched)
        loop.add_signal_handler(signal.SIGHUP, lambda: asyncio.ensure_future(reload(peer)))
    ops = None
    if args.http is not None:
        from .ops import OpsServer

        host, port = http_of(args.http)
        ops = OpsServer(peer, host, port)  # made before the peer starts: a missing prometheus_client is exit 2, not a half-started peer
    endpoint = await peer.start()
    if ops is not None:
        try:
            bound = await ops.start()
        except InvalidArgumentError:
            await peer.stop()
            raise
        logging.getLogger("zeromesh").info("operations endpoint on http://%s:%d (/metrics, /healthz, /readyz)", host, bound, extra={"http": f"{host}:{bound}"})
    print(endpoint, flush=True)
    if not args.handlers:
        logging.getLogger("zeromesh").warning("serves no methods: give --handlers MODULE")
    await stopping.wait()
    await peer.stop()  # /readyz says 503 from the moment it drains
    if ops is not None:
        await ops.close()
    return 0


async def reload(peer: Peer) -> None:
    try:
        await peer.reload_allow_list()
    except InvalidArgumentError:
        pass  # the peer logged it; the list stays as it was


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        if args.command != "peer":
            raise UsageError("a command is needed: peer")
        if args.workers < 0 or args.workers > 256:
            raise UsageError("--workers must be 0 to 256")
        configure_logs(args.log_level, args.log_format)
        return asyncio.run(run_peer(args))
    except (UsageError, InvalidArgumentError) as err:
        text = str(err)  # the library's messages name it already; a usage error's do not
        print(text if text.startswith("zeromesh") else f"zeromesh: {text}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
