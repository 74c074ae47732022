"""What numba's dispatcher costs a call, by how its arguments come: named tuple, tuple or one by one.

    python benchmarks/dispatch_cost.py [--calls 20000]

The engine's per-move call from Python (`batch_kernels.step_view`, the AEC env's step) takes its arrays one by
one, while the vector env's kernels take named tuples (`batch_bots.GameArrays` and the others), once per step
for all games. This prints the microseconds a call of a kernel that does almost nothing costs with each way of
passing the same 11 arrays, a tuple of two and a number (as `GameArrays`), the best of 5 passes, and what
building the named tuple costs. The difference is the dispatcher typing the arguments: arrays and plain
tuples by a C fast path, a named tuple through Python. So `batch_bots`' kernels take plain tuples from Python
and name them on entry (`GameArrays(*arrays)`, the fourth line: free). Asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import numpy as np
from numba import njit


class Arrays(NamedTuple):
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    e: np.ndarray
    f: np.ndarray
    g: np.ndarray
    h: tuple
    i: np.ndarray
    j: np.ndarray
    k: np.ndarray
    n: np.int64


@njit(cache=False)
def named(x, arrays):
    return x[0] + arrays.a[0]


@njit(cache=False)
def plain(x, arrays):
    return x[0] + arrays[0][0]


@njit(cache=False)
def renamed(x, arrays):
    arrays = Arrays(*arrays)  # a plain tuple from Python, named again in the kernel (as `batch_bots` does)
    return x[0] + arrays.a[0]


@njit(cache=False)
def one_by_one(x, a, b, c, d, e, f, g, h, i, j, k, n):
    return x[0] + a[0]


def best_us(fn, args, calls: int) -> float:
    fn(*args)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    fields = [np.zeros(10) for _ in range(7)] + [(np.zeros(3), np.zeros(4))] + [np.zeros(3) for _ in range(3)]
    fields.append(np.int64(3))
    x = np.zeros(3)
    for label, fn, call in [
        ("named tuple", named, (x, Arrays(*fields))),
        ("tuple", plain, (x, tuple(fields))),
        ("tuple, named in the kernel", renamed, (x, tuple(fields))),
        ("one by one", one_by_one, (x, *fields)),
    ]:
        print(f"{label:28} {best_us(fn, call, args.calls):6.2f} us a call")
    t = time.perf_counter()
    for _ in range(args.calls):
        Arrays(*fields)
    print(f"{'building the named tuple':28} {(time.perf_counter() - t) / args.calls * 1e6:6.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
