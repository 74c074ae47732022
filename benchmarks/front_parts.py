"""Where a laying front's time goes: `layout_front_path` timed whole and cut short after each of its parts.

    python benchmarks/front_parts.py [--per-size 300] [--rounds 5] [--seed 0] [--slack 10]

Deals `--per-size` random hands of each size from 3 to 10 cards (a round's hand when it lays) for a
player who did not go out (the automatic rule's `--slack`: the bonuses' worth, 10 with two players),
and as many hands that can go out for the one who did (every card laid). Times, one core, the engine's
front (`solver_kernel.layout_front_hand_in`, in the engine's scratch space) over all of them in a
compiled loop, then copies of it that return after a part: the hand's fields, the word walk
(`hand_words`), the word groups (`_low_starts`), the sweep down, the build. A part's cost is the
difference between the cuts before and after it. Prints each variant's median microseconds a front
over `--rounds` alternating rounds, the parts, and the whole front by hand size. Asserts nothing.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quiddler_env.core import solver_kernel as SK  # noqa: E402
from quiddler_env.core.batch import BatchGame  # noqa: E402
from quiddler_env.core.cards import POINTS_ARRAY, new_deck  # noqa: E402

# Each cut returns before the line that starts with its marker (the front's source, read at run time).
CUTS = (
    ("fields and the call", "    word_term, word_idx, word_packed, word_low = hand_words("),
    ("word walk", "    low_start, guard = _low_starts("),
    ("word groups", "    packed = guard\n"),
    ("sweep down", "    floor = np.int64(-1)"),
    ("build", "    # Non-dominated cells of the whole hand"),
)
_EMPTY_RETURN = "    e = np.zeros(1, np.int32)\n    return e[:0], e[:0], e[:0], e, e[:0], e, e[:0]\n"


def front_variant(marker: str | None):
    """`layout_front_hand_in` over a copy of `layout_front_path` that returns before `marker` (None: whole),
    wrapped in a compiled loop over hands."""
    source = inspect.getsource(SK.layout_front_path.py_func).replace("cache=True, ", "")
    if marker is not None:
        if marker not in source:
            raise SystemExit(f"front_parts: the front's source has no line {marker.strip()!r}; update CUTS")
        source = source[: source.index(marker)] + _EMPTY_RETURN
    namespace = dict(vars(SK))
    exec(source, namespace)  # noqa: S102  (the package's own source, cut)
    exec(inspect.getsource(SK.layout_front_hand_in.py_func).replace("cache=True, ", ""), namespace)  # noqa: S102
    front = namespace["layout_front_hand_in"]

    @njit
    def loop(hands, full_only, S0, S1, S2, S3, S4, S5, S6, S7, points, slack, by_longest, ws):
        n = 0
        for i in range(hands.shape[0]):
            n += front(hands[i], S0, 2, full_only[i], S1, S2, S3, S4, S5, S6, S7, points, slack, by_longest, ws)[
                0
            ].shape[0]
        return n

    return loop


def deal_hands(per_size: int, seed: int, S: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(hands as face counts, full_only) for sizes 3..10: per_size hands each way, the goers' able to go out."""
    rng = np.random.default_rng(seed)
    deck = np.asarray(new_deck())
    hands, full_only = [], []
    for size in range(3, 11):
        kept = goers = 0
        while kept < per_size or goers < per_size:
            h = np.bincount(rng.choice(deck, size, replace=False), minlength=31).astype(np.int64)
            if kept < per_size:
                hands.append(h)
                full_only.append(False)
                kept += 1
            if goers < per_size:
                front = SK.layout_front_hand(h, S[0], 2, True, *S[1:8], POINTS_ARRAY, -1, False)
                if front[0].shape[0]:
                    hands.append(h)
                    full_only.append(True)
                    goers += 1
    return np.asarray(hands), np.asarray(full_only)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-size", type=int, default=300, help="hands per size, each way")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slack", type=int, default=10, help="the automatic rule's slack for a player not out")
    parser.add_argument(
        "--both-bonuses",
        action="store_true",
        help="the most words' bonus counts too (the front by longest word and words, not by longest word alone)",
    )
    args = parser.parse_args(argv)
    S = BatchGame(num_games=1).tables
    hands, full_only = deal_hands(args.per_size, args.seed, S)
    ws = SK.new_scratch()
    variants = {name: front_variant(marker) for name, marker in CUTS}
    variants["whole front"] = front_variant(None)

    def timed(loop, rows) -> float:
        start = time.perf_counter()
        loop(hands[rows], full_only[rows], *S[:8], POINTS_ARRAY, args.slack, not args.both_bonuses, ws)
        return (time.perf_counter() - start) / rows.size * 1e6

    every = np.arange(hands.shape[0])
    for loop in variants.values():  # compile and warm
        timed(loop, every)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, loop in variants.items():
            times[name].append(timed(loop, every))
    median = {name: float(np.median(t)) for name, t in times.items()}
    print(f"{hands.shape[0]} hands of 3 to 10 cards, half laying every card; microseconds a front, one core")
    before = 0.0
    for name in (*(n for n, _ in CUTS), "whole front"):
        part = "reading the front" if name == "whole front" else name
        print(f"  {part:18s} {median[name] - before:6.2f}   (returning after it: {median[name]:.2f})")
        before = median[name]
    print("the whole front by hand size: cards, not out, went out")
    sizes = hands.sum(axis=1)
    for size in range(3, 11):
        rows = [np.flatnonzero((sizes == size) & (full_only == goer)) for goer in (False, True)]
        cost = [float(np.median([timed(variants["whole front"], r) for _ in range(3)])) for r in rows]
        print(f"  {size:2d}  {cost[0]:6.2f}  {cost[1]:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
