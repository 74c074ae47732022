"""The engine's two searches per call, by hand size: what a learner step of the vector env is made of.

    python benchmarks/bench_kernels.py [--hands 3000] [--seed 0]

Times, in a compiled loop (no Python between calls), the go-out search the engine runs after
every draw (`solver_kernel.go_out_face_bits`: which discards leave a hand that lays out) and the
laying front it runs for every hand at a round's end (`solver_kernel.layout_front_hand`, the
automatic rule's `slack`, not laying every card), on random hands dealt from the deck, 4 to 11
cards. Both are bound by memory latency (trie walks and per-state tables), Quiddler-v0's own
step by the Python interpreter, so the vector env's ratio to Quiddler-v0 moves with the machine:
these figures say how fast this machine runs the kernels. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quiddler_env.core import cards  # noqa: E402
from quiddler_env.core import solver_kernel as SK  # noqa: E402
from quiddler_env.core.batch import BatchGame  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.scoring import bonuses_in_play  # noqa: E402

SIZES = (4, 6, 8, 9, 10, 11)


@njit(cache=True)
def _go_out_loop(hands, min_cards, S0, S1, S2, S3, S4, S7):
    found = 0
    for i in range(hands.shape[0]):
        found += SK.go_out_face_bits(hands[i], S0, min_cards, S1, S2, S3, S4, S7, False) != 0
    return found


@njit(cache=True)
def _front_loop(hands, min_cards, S0, S1, S2, S3, S4, S5, S6, S7, points, slack):
    layouts = 0
    for i in range(hands.shape[0]):
        layouts += SK.layout_front_hand(
            hands[i], S0, min_cards, False, S1, S2, S3, S4, S5, S6, S7, points, slack, False
        )[0].shape[0]
    return layouts


def deal(rng: np.random.Generator, n_hands: int, size: int) -> np.ndarray:
    """`n_hands` random hands of `size` cards from the deck, as 31 face counts each."""
    deck = np.repeat(np.arange(cards.NUM_FACES), cards.COUNTS_ARRAY)
    hands = np.zeros((n_hands, cards.NUM_FACES), np.int8)
    for i in range(n_hands):
        np.add.at(hands[i], rng.choice(deck, size, replace=False), 1)
    return hands


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=3000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, as bench_vector
    config = QuiddlerConfig()
    game = BatchGame(config, 1)
    S = game.tables
    min_cards = config.min_word_cards
    # The automatic rule's slack, as the engine's `_front` has it: each bonus in play at its worth.
    slack = abs(config.bonus_value) * len(bonuses_in_play(config, config.num_players))
    points = np.asarray(cards.POINTS_ARRAY, dtype=np.int64)
    rng = np.random.default_rng(args.seed)
    print(f"microseconds per call, {args.hands} random hands per size, compiled loop, one core")
    print(f"{'cards':>5} {'go-out search':>14} {'laying front':>13} {'hands that go out':>18}")
    for size in SIZES:
        hands = deal(rng, args.hands, size)
        _go_out_loop(hands[:2], min_cards, S[0], S[1], S[2], S[3], S[4], S[7])  # compile, warm the trie
        _front_loop(hands[:2], min_cards, S[0], S[1], S[2], S[3], S[4], S[5], S[6], S[7], points, slack)
        t = time.perf_counter()
        going = _go_out_loop(hands, min_cards, S[0], S[1], S[2], S[3], S[4], S[7])
        go_us = (time.perf_counter() - t) / args.hands * 1e6
        t = time.perf_counter()
        _front_loop(hands, min_cards, S[0], S[1], S[2], S[3], S[4], S[5], S[6], S[7], points, slack)
        front_us = (time.perf_counter() - t) / args.hands * 1e6
        print(f"{size:>5} {go_us:>14.1f} {front_us:>13.1f} {going / args.hands:>18.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
