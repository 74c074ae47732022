"""Where the vector env's time goes in searches: how often each runs in random play, and what it costs by round.

    python benchmarks/search_costs.py [--steps 300] [--games 1024] [--per-size 600]

Plays `Quiddler-v0`'s vector env (`--games` games, random opponents, a uniformly random legal learner,
as `bench_vector.py`) for `--steps` steps and records from the learner's seat: the rounds that end, by
round, the hands its mask searches (after each draw: which discards go out) and the hands it holds
before a draw (what a player lays at a round's end has as many cards). Then it times, one core, the
engine's searches over up to `--per-size` of those hands per round, each hand once in a compiled loop:

- `go-out`: the mask's search, which discards of the hand go out (`solver_kernel.go_out_face_bits_in`);
- `words`: its word walk alone (`solver_kernel.hand_words`), which every search starts with;
- `front`: the laying front of the automatic rule (`solver_kernel.layout_front_hand_in`) for a player
  who did not go out (the rule's slack), and `goer front` for the one who did (every card laid; on the
  mask's hands with a discard that goes out, less that discard).

Prints per round: its hand size, the learner's mask searches per round (the opponent's own go-out
searches, made only when its random pick is a go-out move, are not counted), the share of those hands
that can go out, each search's microseconds, how often an unbounded memo of the mask's search would
have answered (the hand was searched before), and the microseconds a round spends in the learner's
mask searches and the two fronts. Then the learner steps per round and what those searches add up to
per learner step, next to the vector env's whole step measured in the same run. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_vector import random_legal  # noqa: E402  (the benchmarks' random learner)

import quiddler_env  # noqa: E402,F401  (registers the ids)
from quiddler_env.core import batch_kernels as K  # noqa: E402
from quiddler_env.core import solver_kernel as SK  # noqa: E402


@njit(cache=False)
def _go_out_all(hands, key_order, min_cards, e0, e1, e2, e3, term_cards, ws):
    bits = np.empty(hands.shape[0], np.int64)
    for k in range(hands.shape[0]):
        bits[k] = SK.go_out_face_bits_in(hands[k], key_order, min_cards, e0, e1, e2, e3, term_cards, False, ws)
    return bits


@njit(cache=False)
def _words_all(hands, key_order, min_cards, e0, e1, e2, e3, term_cards, ws):
    found = 0
    for k in range(hands.shape[0]):
        ws2, _, labels, counts = SK._fields_in_scratch(hands[k], key_order, ws)
        strides = SK._strides(counts)
        found += SK.hand_words(labels, counts, strides, min_cards, e0, e1, e2, e3, term_cards, ws2)[0].shape[0]
    return found


@njit(cache=False)
def _fronts_all(hands, full_only, R, S):
    """The engine's own front call (`batch_kernels._front`: its rule options, its slack) for each hand."""
    layouts = 0
    for k in range(hands.shape[0]):
        layouts += K._front(hands[k], full_only, R, S)[0].shape[0]
    return layouts


def _best_us(run, hands: np.ndarray, repeats: int = 3) -> float:
    """Microseconds per hand, the best of `repeats` passes (after one pass that compiles and warms)."""
    if hands.shape[0] == 0:
        return float("nan")
    run(hands[:2])
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run(hands)
        best = min(best, time.perf_counter() - start)
    return best / hands.shape[0] * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--per-size", type=int, default=600)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    envs = gym.make_vec("Quiddler-v0", num_envs=args.games, vectorization_mode="vector_entry_point")
    g = envs.unwrapped.games
    num_rounds = int(g.rules[K.R_ROUNDS])
    rng = np.random.default_rng(args.seed)
    hand_cols = int(g.offsets[K.L_HANDS]) + np.arange(K.FACES)
    mask_hands: list[list[np.ndarray]] = [[] for _ in range(num_rounds)]
    held_hands: list[list[np.ndarray]] = [[] for _ in range(num_rounds)]
    seen: set[bytes] = set()
    searches = np.zeros(num_rounds, np.int64)
    memo_hits = np.zeros(num_rounds, np.int64)
    rounds_ended = np.zeros(num_rounds, np.int64)
    _, infos = envs.reset(seed=args.seed)
    step_seconds = 0.0
    for _ in range(args.steps):
        actions = random_legal(rng, infos["action_mask"])
        round_before = g.ints[:, K.I_ROUND].copy()
        done_before = g.rounds_completed.copy()
        start = time.perf_counter()
        _, _, _, _, infos = envs.step(actions)
        step_seconds += time.perf_counter() - start
        ended = np.flatnonzero(g.rounds_completed > done_before)
        # (a step ends at most one round per game: the learner moves in every round)
        np.add.at(rounds_ended, round_before[ended], 1)
        cur = g.ints[:, K.I_CUR]
        seat_cols = hand_cols[None, :] + (cur * K.FACES)[:, None]
        for phase, store in ((K.DISCARD, mask_hands), (K.DRAW, held_hands)):
            rows = np.flatnonzero(g.ints[:, K.I_PHASE] == phase)
            hands = g.cards[rows[:, None], seat_cols[rows]].astype(np.int64)
            for i, hand in zip(rows.tolist(), hands, strict=True):
                r = int(g.ints[i, K.I_ROUND])
                if phase == K.DISCARD:
                    searches[r] += 1
                    key = hand.tobytes()
                    memo_hits[r] += key in seen
                    seen.add(key)
                if len(store[r]) < args.per_size:
                    store[r].append(hand)

    S, R = g.tables, g.rules
    min_cards = int(R[K.R_MIN_CARDS])
    walk = (S[0], min_cards, S[1], S[2], S[3], S[4], S[7], S[8])
    print(
        f"{args.games} games x {args.steps} steps of random play (random opponents, a random legal learner); "
        f"microseconds per hand, one core"
    )
    print(
        f"{'round':>5} {'cards':>5} {'masks/round':>11} {'can go out':>10} {'go-out':>7} {'words':>6} "
        f"{'front':>6} {'goer front':>10} {'memo hits':>9} {'us/round':>8}"
    )
    per_game = 0.0
    for r in range(num_rounds):
        mask_h = np.array(mask_hands[r], dtype=np.int64).reshape(-1, K.FACES)
        held = np.array(held_hands[r], dtype=np.int64).reshape(-1, K.FACES)
        bits = _go_out_all(mask_h, *walk) if mask_h.shape[0] else np.zeros(0, np.int64)
        goers = []
        for hand, b in zip(mask_h, bits, strict=True):
            if b:
                face = (int(b) & -int(b)).bit_length() - 1  # the lowest face whose discard goes out
                goer = hand.copy()
                goer[face] -= 1
                goers.append(goer)
        goer_h = np.array(goers, dtype=np.int64).reshape(-1, K.FACES)
        go_us = _best_us(lambda h: _go_out_all(h, *walk), mask_h)
        words_us = _best_us(lambda h: _words_all(h, *walk), mask_h)
        front_us = _best_us(lambda h: _fronts_all(h, False, R, S), held)
        goer_us = _best_us(lambda h: _fronts_all(h, True, R, S), goer_h)
        per_round = searches[r] / max(rounds_ended[r], 1)
        us_round = per_round * go_us + front_us + goer_us
        per_game += us_round
        print(
            f"{r + 1:>5} {int(g.sizes[r]):>5} {per_round:>11.2f} {bits.astype(bool).mean():>10.1%} "
            f"{go_us:>7.2f} {words_us:>6.2f} {front_us:>6.2f} {goer_us:>10.2f} "
            f"{memo_hits[r] / max(searches[r], 1):>9.1%} {us_round:>8.1f}"
        )
    learner_steps = args.steps * args.games
    steps_per_round = learner_steps / max(rounds_ended.sum(), 1)
    step_us = step_seconds / learner_steps * 1e6
    searches_us = per_game / (num_rounds * steps_per_round)
    print(
        f"learner steps per round: {steps_per_round:.2f}; these searches: {searches_us:.2f} us a learner step, "
        f"of {step_us:.2f} us a learner step of the vector env measured while recording ({searches_us / step_us:.0%}; "
        "the opponent's go-out searches and the rest of the engine are the remainder)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
