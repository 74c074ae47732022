"""Solitaire speed and play strength: moves per second through the rules and the env, random and greedy scores.

    python benchmarks/bench_solitaire.py [--games 500] [--runs 5]

Prints figures (median of `--runs` runs for the speeds); asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import quiddler_env  # noqa: F401  (registers the ids)
from quiddler_env.core.solitaire import SolitaireGame
from quiddler_env.envs.solitaire_env import QuiddlerSolitaireEnv


def core_moves_per_second(games: int, seed: int) -> float:
    """Random legal moves through `SolitaireGame` alone (legal actions asked before every move)."""
    game, rng = SolitaireGame(), np.random.default_rng(seed)
    moves, start = 0, time.perf_counter()
    for g in range(games):
        game.reset(seed=seed + g)
        while legal := game.legal_actions():
            game.step(legal[int(rng.integers(len(legal)))])
            moves += 1
    return moves / (time.perf_counter() - start)


def env_steps_per_second(env: gym.Env, games: int, seed: int) -> float:
    """Random legal actions through an env (observation, mask and info built every step)."""
    rng = np.random.default_rng(seed)
    steps, start = 0, time.perf_counter()
    for g in range(games):
        _, info = env.reset(seed=seed + g)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            _, _, done, _, info = env.step(int(legal[int(rng.integers(len(legal)))]))
            steps += 1
    return steps / (time.perf_counter() - start)


def play(games: int, seed: int, greedy: bool) -> tuple[float, float]:
    """Mean score and win rate of the random or the greedy (most points now) policy."""
    env, rng = QuiddlerSolitaireEnv(), np.random.default_rng(seed)
    scores, wins = [], 0
    for g in range(games):
        _, info = env.reset(seed=seed + g)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            if greedy:
                points = {m - 1: env.game.dictionary.term_points[t] for m, t in env.game.word_moves()}
                action = max(legal, key=lambda a: (points.get(int(a), -1), -a))
            else:
                action = legal[int(rng.integers(len(legal)))]
            _, _, done, _, info = env.step(int(action))
        scores.append(info["score"])
        wins += info["won"]
    return float(np.mean(scores)), wins / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    wrapped = gym.make("QuiddlerSolitaire-v0")
    raw = QuiddlerSolitaireEnv()
    speeds = {
        "core moves/s": [core_moves_per_second(args.games, 1000 * r) for r in range(args.runs)],
        "raw env steps/s": [env_steps_per_second(raw, args.games, 1000 * r) for r in range(args.runs)],
        "gym.make env steps/s": [env_steps_per_second(wrapped, args.games, 1000 * r) for r in range(args.runs)],
    }
    for name, values in speeds.items():
        print(f"{name:>22}: {statistics.median(values):9.0f}  (median of {args.runs} runs of {args.games} games)")
    for name, greedy in (("random", False), ("greedy", True)):
        score, win_rate = play(args.games, 0, greedy)
        print(f"{name:>22}: mean score {score:.1f}, win rate {win_rate:.3f} over {args.games} games (seeds 0..)")


if __name__ == "__main__":
    main()
