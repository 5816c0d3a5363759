"""What raw multiprocessing reaches on this machine: the spin loop in a Pool of 2 against a Pool
of 1, the same tasks; prints the ratio of tasks a second."""
import sys
import time
from multiprocessing import Pool

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from work import spin  # noqa: E402


def rate(workers: int, tasks: int, n: int) -> float:
    with Pool(workers) as pool:
        pool.map(spin, [{"n": 1000}] * workers)  # warm
        t = time.monotonic()
        pool.map(spin, [{"n": n}] * tasks, chunksize=1)
        return tasks / (time.monotonic() - t)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
    one, two = rate(1, 40, n), rate(2, 40, n)
    print(f"{one:.2f} {two:.2f} {two / one:.2f}")
