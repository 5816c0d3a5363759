"""The Python side of examples/python-worker: the CPU-heavy work, as module-level functions (a
process pool imports this module in each worker). Run it as a peer:
    python -m zeromesh peer --seeds tcp://127.0.0.1:5555 --handlers work --workers 2
from this folder (or with it on PYTHONPATH)."""


def count_primes(args):
    """How many primes are below `limit`: the heavy route's work."""
    limit = int(args["limit"])
    if not 2 <= limit <= 10_000_000:
        err = ValueError("limit must be a whole number from 2 to 10000000")
        err.code = "E_LIMIT"
        raise err
    sieve = bytearray([1]) * limit
    sieve[0:2] = b"\x00\x00"
    for n in range(2, int(limit ** 0.5) + 1):
        if sieve[n]:
            sieve[n * n::n] = bytes(len(range(n * n, limit, n)))
    return {"limit": limit, "count": sum(sieve)}
