"""What the Python tests start: Node peers and Node clients of the same commit (the repository
this package lives in), and Python peers as processes. Every process is killed at the end of
its test, by PID; every wait is bounded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parent
NODE = os.environ.get("NODE", "node")


class Procs:
    def __init__(self):
        self.all: list[subprocess.Popen] = []
        self.err_lines: dict[int, list[bytes]] = {}  # lines of stderr read by log() and not yet looked at, the last one partial
        self.err_seen: dict[int, list[str]] = {}  # lines of stderr log() looked at

    def start(self, argv: list[str], env: dict | None = None) -> subprocess.Popen:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}, cwd=ROOT)
        self.all.append(p)
        return p

    def line(self, p: subprocess.Popen, timeout: float = 10.0) -> str:
        """The next line the process prints on stdout (bounded in time)."""
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if sel.select(timeout=max(0.0, end - time.monotonic())):
                line = p.stdout.readline()
                if line:
                    return line.strip()
            if p.poll() is not None:
                raise RuntimeError(f"{p.args} exited {p.returncode}: {p.stderr.read()[-2000:]}")
        raise TimeoutError(f"{p.args} printed nothing within {timeout} s")

    def log(self, p: subprocess.Popen, match, timeout: float = 10.0) -> dict:
        """The next JSON log line on the process's stderr for which match(line) holds (bounded in
        time). Read from the descriptor, with the lines already read kept per process."""
        import selectors

        fd = p.stderr.fileno()
        buf = self.err_lines.setdefault(p.pid, [b""])
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        end = time.monotonic() + timeout
        seen = []
        try:
            while True:
                while len(buf) > 1:
                    text = buf.pop(0)
                    seen.append(text.decode(errors="replace"))
                    self.err_seen.setdefault(p.pid, []).append(seen[-1] + "\n")
                    try:
                        line = json.loads(text)
                    except ValueError:
                        continue
                    if match(line):
                        return line
                if time.monotonic() >= end:
                    break
                if sel.select(timeout=max(0.0, end - time.monotonic())):
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    parts = (buf.pop() + chunk).split(b"\n")
                    buf.extend(parts)
        finally:
            sel.close()
        raise TimeoutError(f"no such log line within {timeout} s; saw: {''.join(seen)[-3000:]}")

    def stderr(self, p: subprocess.Popen) -> str:
        """All the process wrote on stderr (once it exited): what log() read, then the rest."""
        buf = self.err_lines.get(p.pid, [b""])
        return "".join(self.err_seen.get(p.pid, [])) + b"\n".join(buf).decode(errors="replace") + p.stderr.read()

    def metric(self, base: str, name: str) -> float:
        """A Python peer's metric, from its --http /metrics (0 while it has none)."""
        import urllib.request

        with urllib.request.urlopen(f"{base}/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.split(" ")[0] == name:
                    return float(line.rsplit(" ", 1)[1])
        return 0.0

    def node_peer(self, *flags: str) -> tuple[subprocess.Popen, str]:
        p = self.start([NODE, str(ROOT / "bin" / "zeromesh.js"), "peer", "--demo-handlers", "--bind", "tcp://127.0.0.1:0", "--log-level", "warn", *flags])
        return p, self.line(p)

    def python_peer(self, *flags: str) -> tuple[subprocess.Popen, str]:
        env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
        p = self.start([sys.executable, "-m", "zeromesh", "peer", "--handlers", "handlers_sample", "--log-level", "warning", *flags], env)
        return p, self.line(p)

    def node_client(self, seeds: list[str], **options: str) -> subprocess.Popen:
        argv = [NODE, str(TESTS / "node" / "drive.mjs"), "--seeds", ",".join(seeds)]
        for k, v in options.items():
            argv += [f"--{k}", str(v)]
        return self.start(argv)

    def result(self, p: subprocess.Popen, timeout: float = 30.0) -> dict:
        return json.loads(self.line(p, timeout))

    def zeromesh(self, *argv: str) -> str:
        return subprocess.run([NODE, str(ROOT / "bin" / "zeromesh.js"), *argv], capture_output=True, text=True, timeout=30, cwd=ROOT).stdout

    def kill_all(self) -> None:
        for p in self.all:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


@pytest.fixture
def procs():
    ps = Procs()
    yield ps
    ps.kill_all()


def eventually(fn, timeout: float = 10.0, interval: float = 0.05):
    """fn()'s value once it stops raising, or its last error after `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except Exception:
            if time.monotonic() > end:
                raise
            time.sleep(interval)
