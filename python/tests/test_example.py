"""examples/python-worker as its README says to run it: a Node seed peer, two Python peers of
examples/python-worker/work.py, and the Express API (app.js), over HTTP: the cheap route, the
heavy one on the Python peers, a bad limit as 400; SIGTERM ends the API with 0."""
import json
import signal
import sys
import urllib.error
import urllib.request

from conftest import NODE, ROOT, eventually

EXAMPLE = ROOT / "examples" / "python-worker"


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_the_python_worker_example(procs):
    _, seed = procs.node_peer()
    for _ in range(2):
        p = procs.start([sys.executable, "-m", "zeromesh", "peer", "--seeds", seed, "--handlers", "work", "--workers", "2", "--log-level", "warning"], {"PYTHONPATH": str(EXAMPLE)})
        procs.line(p)
    api = procs.start([NODE, str(EXAMPLE / "app.js")], {"ZEROMESH_SEEDS": seed, "PORT": "0"})
    base = procs.line(api).split(" on ")[1]
    assert get(f"{base}/") == (200, {"hello": "world"})
    status, body = eventually(lambda: (lambda r: r if r[0] == 200 else (_ for _ in ()).throw(AssertionError(r)))(get(f"{base}/primes?limit=100000")), timeout=15)
    assert body == {"limit": 100000, "count": 9592}
    assert get(f"{base}/primes?limit=1")[0] == 400
    api.send_signal(signal.SIGTERM)
    assert api.wait(timeout=15) == 0
