"""Laying speed and front sizes: `layout_front` against `best_layout`, and what sets K.

    python benchmarks/bench_laying.py [--hands 2000] [--sizes 20000] [--seed 0]

Prints the median/p99 time of `layout_front` on random 11-card hands (cold: a fresh
solver memo; memoised: the same hands again), `best_layout` on the same hands in the
same run, and the largest fronts seen over random hands of 1..11 cards, both minimum
word sizes, laying every card (`full_only`, on hands that can go out) or not. The
largest 11-card front is what `laying.MAX_CANDIDATES` (K) must cover. Asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np


def _hand(rng: np.random.Generator, deck: np.ndarray, n: int) -> list[int]:
    counts = [0] * 31
    for f in rng.choice(deck, n, replace=False):
        counts[f] += 1
    return counts


def _timed(fn, hands) -> tuple[float, float]:
    times = []
    for c in hands:
        t = time.perf_counter()
        fn(c)
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6, float(np.percentile(times, 99)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=2000, help="11-card hands timed")
    parser.add_argument("--sizes", type=int, default=20000, help="random hands per setting for the front sizes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from quiddler_env.core.cards import new_deck
    from quiddler_env.core.dictionary import load_dictionary
    from quiddler_env.core.laying import MAX_CANDIDATES
    from quiddler_env.core.solver import HandSolver

    d = load_dictionary()
    deck = np.asarray(new_deck())
    rng = np.random.default_rng(args.seed)
    hands = [_hand(rng, deck, 11) for _ in range(args.hands)]
    warmup = HandSolver(d)
    warmup.layout_front(hands[0])  # compile / load the kernels
    warmup.layout_front(hands[0], full_only=True)
    warmup.best_layout(hands[0], counts=True)

    print(f"{args.hands} random 11-card hands (times in us)")
    for min_cards in (2, 1):
        for name, call in (
            ("best_layout", lambda s, c: s.best_layout(c, counts=True)),
            ("layout_front", lambda s, c: s.layout_front(c)),
            ("layout_front full_only", lambda s, c: s.layout_front(c, full_only=True)),
        ):
            solver = HandSolver(d, min_cards)
            cold = _timed(lambda c, s=solver, f=call: f(s, c), hands)
            warm = _timed(lambda c, s=solver, f=call: f(s, c), hands)
            print(
                f"  min_cards {min_cards} {name:<23} cold median {cold[0]:7.1f}  p99 {cold[1]:8.1f}"
                f" | memoised median {warm[0]:5.2f}  p99 {warm[1]:5.2f}"
            )

    print(
        f"\nfront sizes, {args.sizes} random hands per (min_cards, full_only), half of them 11 cards;"
        " full_only on hands that go out (n + 1 cards drawn, the first discard that goes out)"
    )
    largest_11 = 0
    for min_cards in (2, 1):
        solver = HandSolver(d, min_cards)
        for full_only in (False, True):
            by_size: dict[int, Counter] = {}
            for i in range(args.sizes):
                n = 11 if i % 2 == 0 else int(rng.integers(1, 11))  # half the hands have 11 cards
                if full_only:
                    # A goer's hand: n + 1 cards after drawing that go out on some discard (redrawn until one does).
                    for _ in range(1000):
                        c = _hand(rng, deck, n + 1)
                        bits = solver.go_out_faces(c)
                        if bits:
                            c[(bits & -bits).bit_length() - 1] -= 1
                            break
                    else:
                        continue
                else:
                    c = _hand(rng, deck, n)
                by_size.setdefault(n, Counter())[len(solver.layout_front(c, full_only=full_only))] += 1
            top = {n: max(sizes) for n, sizes in sorted(by_size.items())}
            largest_11 = max(largest_11, top.get(11, 0))
            hist = by_size.get(11, Counter())
            print(
                f"  min_cards {min_cards} full_only {full_only!s:<5} largest front by hand size {top}"
                f"; 11 cards, size: count {dict(sorted(hist.items()))}"
            )
    print(f"\nlargest 11-card front seen: {largest_11}; MAX_CANDIDATES (K) = {MAX_CANDIDATES}")


if __name__ == "__main__":
    main()
