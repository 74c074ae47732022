"""`core.borrow`: the engine's kernels pass borrowed arrays, views that own no reference count.

A borrowed array must be the same array to every reader and writer (same data, shape and strides),
tuples of them (the solver tables) keep their shape, and anything that is not an array or a number
is refused when the kernel compiles. That the engine plays the same games with them is the parity
tests' part (`test_batch_parity.py`, `benchmarks/engine_ab.py`).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from quiddler_env.core.borrow import borrow


@njit(cache=False)
def _fill_borrowed(a, b, k):
    a, b = borrow(a, b)
    row = a[1]  # a view of a borrowed array
    for j in range(row.shape[0]):
        row[j] = k + j
    b[:] = -k
    return a.shape[0], a.shape[1], a.strides[0], a.strides[1], b.shape[0], b.strides[0]


@njit(cache=False)
def _sum_tables(S, scale):
    S, scale = borrow(S, scale)
    total = 0
    for x in S[0]:
        total += x
    for x in S[1][0]:
        total += x
    return total * scale + S[1][1]


@njit(cache=False)
def _copy_of_borrowed(a):
    (a,) = borrow(a)
    return a[::2].copy()  # a new array, owned: it outlives the call


def test_a_borrowed_array_is_the_same_array():
    a = np.zeros((3, 4), dtype=np.int64)
    b = np.arange(10, dtype=np.int32)[::3]  # not contiguous: strides kept
    shapes = _fill_borrowed(a, b, 7)
    assert shapes == (3, 4, a.strides[0], a.strides[1], b.shape[0], b.strides[0])
    assert a[1].tolist() == [7, 8, 9, 10]
    assert a[0].tolist() == [0] * 4 and a[2].tolist() == [0] * 4
    assert b.tolist() == [-7] * 4


def test_tuples_and_numbers_keep_their_values():
    S = (np.array([1, 2, 3], dtype=np.int64), (np.array([10, 20], dtype=np.int32), 5))
    assert _sum_tables(S, 2) == (1 + 2 + 3 + 10 + 20) * 2 + 5


def test_no_count_lost_or_gained():
    """Borrowing changes no reference count of the caller's arrays, over many calls; what a kernel makes
    from a borrowed array (a copy) is its own and lives on after the call."""
    a = np.arange(12, dtype=np.int64)
    before = sys.getrefcount(a)
    copies = [_copy_of_borrowed(a) for _ in range(1000)]
    assert sys.getrefcount(a) == before
    del a
    assert all(c.tolist() == [0, 2, 4, 6, 8, 10] for c in copies)


def test_only_arrays_and_numbers():
    @njit(cache=False)
    def borrows_a_list(x):
        return borrow(x)

    with pytest.raises(TypingError, match="borrow takes arrays, numbers and tuples of them"):
        borrows_a_list([1, 2, 3])
