"""Handlers of the tests' Python peers: module-level functions, as a process pool needs."""
import os


def whoami(args):
    return {"language": "python", "pid": os.getpid()}


def spin(args):
    n = int((args or {}).get("n", 100000))
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def boom(args):
    err = ValueError("out of stock")
    err.code = "E_STOCK"
    raise err


async def echo(args):
    return args
