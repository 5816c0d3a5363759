"""What the Python peer logs, and how: Python `logging` under the `zeromesh` logger (its
children: zeromesh.peer, zeromesh.pool, zeromesh.membership), text by default, JSON lines on
request (`--log-format json`, or JsonFormatter on your own handler). A report that may repeat
(a handler's error, a call past its deadline) is logged once a minute per kind and method,
with how many like it came since: an error storm does not flood the logs (the Node peer's rule,
peer/handshake-reports.js)."""
from __future__ import annotations

import json
import logging
import time
from typing import Callable

REPORT_S = 60.0  # one report per id a minute
MAX_IDS = 1024  #  ids remembered; past it the memory starts over

# The attributes every LogRecord has: anything else a call passed in `extra` is a field of its own.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (ms since 1970), level, logger, msg, and the call's `extra` fields."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"time": int(record.created * 1000), "level": record.levelname.lower(), "logger": record.name, "msg": record.getMessage()}
        for k, v in vars(record).items():
            if k not in _STANDARD and not k.startswith("_"):
                out[k] = v
        if record.exc_info:
            out["err"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def configure(level: str = "info", fmt: str = "text") -> None:
    """Logs on stderr at `level`, as text or JSON lines (python -m zeromesh peer)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


class Reports:
    """Whether a repeated report is due: `reportable(id)` is None within REPORT_S of the last
    report of `id`, else how many were held back since."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.last: dict[str, list] = {}  # id -> [when reported, held back since]

    def reportable(self, id: str) -> int | None:
        now = self.clock()
        last = self.last.get(id)
        if last is not None and now - last[0] < REPORT_S:
            last[1] += 1
            return None
        if len(self.last) >= MAX_IDS:
            self.last.clear()
        self.last[id] = [now, 0]
        return 0 if last is None else last[1]


def repeats_text(n: int) -> str:
    return f" (and {n} like it in the last minute)" if n else ""
