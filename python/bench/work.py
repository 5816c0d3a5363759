"""The handlers of bench/work/python.js: an echo, and the classic CPU loop."""


async def echo(args):
    return args


def spin(args):
    total = 0
    for i in range(int(args["n"])):
        total += i * i % 7
    return total
