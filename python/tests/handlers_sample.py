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


def placed(order):
    """A subscription: orders.placed in the group `python-billing` (a Node publish reaches it)."""
    if order.get("bad"):
        err = ValueError("cannot bill")
        err.code = "E_BILL"
        raise err
    return None


async def dropped(key):
    return None


events = {"orders.placed": {"group": "python-billing", "handler": placed}, "cache.drop": {"group": "python-cache", "handler": dropped}}


def hang(args):
    """Sleeps `seconds` (a call that hangs past its deadline), having made the file `mark` if given."""
    import time

    if (args or {}).get("mark"):
        open(args["mark"], "w").close()
    time.sleep(float((args or {}).get("seconds", 30)))
    return "woke"


def die(args):
    """Ends its process at once (a crash in an extension, an os._exit): in a worker, the worker."""
    os._exit(3)
