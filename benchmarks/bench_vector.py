"""The native vector env against `Quiddler-v0`: learner steps per second, side by side, on one core.

    python benchmarks/bench_vector.py [--sizes 1 64 1024] [--seconds 4] [--repeats 3]

For each opponent kind (`random`, `greedy`) it measures `gymnasium.make("Quiddler-v0")`
(the opponents are the Python bots of `quiddler_agents.simple`) and `gymnasium.make_vec("Quiddler-v0",
num_envs=N, vectorization_mode="vector_entry_point")` (the engine's compiled bots). The learner
plays a uniformly random legal move in both, drawn by one compiled function (`random_legal`) from
a uniform number per game: the learner's own cost is kept small and alike on both sides (numpy's
row-wise draw, an argmax over N x 64 random numbers, took 4-10% of the vector env's step). The
settings are interleaved: every repeat measures each for `--seconds`, so the machine's load hits
them alike. The process is pinned to one core.
Prints the median learner steps/s of each setting and its ratio to `Quiddler-v0` with the
same opponents, and the memory the vector env at the largest N added (resident set size,
measured after its first steps, so the compiled kernels are loaded before the baseline).

With random opponents it also measures the engine alone at the largest N: the same games (a
uniformly random legal move at every seat) played by the compiled bots of every seat in one
call (`BatchGame.play_bots`), no Python between moves. Its learner steps/s (a learner step: one
move of one seat and the others' moves up to its next, so moves / players) is the most any vector
env over these kernels can make, and its ratio to `Quiddler-v0` the most the vector env's ratio
can be until the kernels themselves are faster.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiddler_env  # noqa: E402,F401  (registers the ids)
from quiddler_agents.registry import make as make_agent  # noqa: E402
from quiddler_env.core.batch import BatchGame  # noqa: E402
from quiddler_env.core.batch_bots import BOT_CODES  # noqa: E402


@njit(cache=True)
def _pick_legal(masks, uniforms, out):
    for i in range(masks.shape[0]):
        n = 0
        for a in range(masks.shape[1]):
            n += masks[i, a] != 0
        r = np.int64(uniforms[i] * n)
        out[i] = 0  # no legal move (an ended game under autoreset): any action, it is ignored
        for a in range(masks.shape[1]):
            if masks[i, a] != 0:
                if r == 0:
                    out[i] = a
                    break
                r -= 1


def random_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per row of `masks` (int8 or bool, a row per game), one uniform draw each."""
    masks = np.ascontiguousarray(masks).view(np.int8) if masks.dtype == np.bool_ else np.ascontiguousarray(masks)
    out = np.empty(masks.shape[0], dtype=np.int64)
    _pick_legal(masks, rng.random(masks.shape[0]), out)
    return out


def single_env(opponent: str):
    if opponent == "random":
        return gym.make("Quiddler-v0")
    return gym.make("Quiddler-v0", opponents=make_agent(opponent, seed=0, num_players=2))


def measure_single(env, seconds: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        action = random_legal(rng, info["action_mask"][None])[0]
        _, _, terminated, truncated, info = env.step(int(action))
        steps += 1
        if terminated or truncated:
            _, info = env.reset()
    return steps / (time.perf_counter() - start)


def measure_vector(envs, seconds: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    _, infos = envs.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, _, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
        steps += envs.num_envs
    return steps / (time.perf_counter() - start)


def measure_engine(games: BatchGame, seconds: float, seed: int) -> float:
    """Learner steps/s of random play with every seat a compiled random bot: the engine alone."""
    n = games.num_games
    bots = np.full((n, games.num_players), BOT_CODES["random"], dtype=np.int64)
    moves = np.zeros(n, dtype=np.int64)
    start = time.perf_counter()
    episode = 0
    while time.perf_counter() - start < seconds:
        games.reset(seed + episode)  # play every game to its end, then deal new ones
        games.play_bots(games.all_games, bots, moves)
        episode += 1
    return moves.sum() / games.num_players / (time.perf_counter() - start)


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--opponents", nargs="+", default=["random", "greedy"], choices=["random", "greedy"])
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, as the targets say

    before = rss_mb()
    largest = max(args.sizes)
    settings: dict[tuple[str, int], object] = {}
    for opponent in args.opponents:
        settings[(opponent, 0)] = single_env(opponent)
        for n in args.sizes:
            settings[(opponent, n)] = gym.make_vec(
                "Quiddler-v0", num_envs=n, vectorization_mode="vector_entry_point", opponents=opponent
            )
    engine = BatchGame(num_games=largest) if "random" in args.opponents else None
    # Warm up (compiles the kernels, fills the solver's memo as a long run would have it).
    for (_, n), env in settings.items():
        (measure_single if n == 0 else measure_vector)(env, 0.5, 0)
    if engine is not None:
        measure_engine(engine, 0.5, 0)
    base_vec = [(k, e) for k, e in settings.items() if k[1] == largest]
    figures: dict[tuple[str, int], list[float]] = {k: [] for k in settings}
    engine_figures: list[float] = []
    for repeat in range(args.repeats):
        for key, env in settings.items():
            run = measure_single if key[1] == 0 else measure_vector
            figures[key].append(run(env, args.seconds, 100 + repeat))
        if engine is not None:
            engine_figures.append(measure_engine(engine, args.seconds, 1000 * (repeat + 1)))
    after = rss_mb()

    print(f"learner steps/s, median of {args.repeats} x {args.seconds:g} s, one core, 2 players")
    print(f"{'opponents':<10} {'env':<28} {'steps/s':>10} {'x Quiddler-v0':>14}")
    for opponent in args.opponents:
        base = statistics.median(figures[(opponent, 0)])
        print(f"{opponent:<10} {'Quiddler-v0':<28} {base:>10,.0f} {1.0:>14.2f}")
        for n in args.sizes:
            value = statistics.median(figures[(opponent, n)])
            print(f"{opponent:<10} {f'vector env, num_envs={n}':<28} {value:>10,.0f} {value / base:>14.2f}")
        if opponent == "random" and engine_figures:
            value = statistics.median(engine_figures)
            print(f"{opponent:<10} {f'engine alone, {largest} games':<28} {value:>10,.0f} {value / base:>14.2f}")
    # Memory: a fresh vector env at the largest N, next to the ones already measured (kernels compiled).
    start = rss_mb()
    extra = gym.make_vec("Quiddler-v0", num_envs=largest, vectorization_mode="vector_entry_point", opponents="greedy")
    measure_vector(extra, 1.0, 7)
    grown = rss_mb() - start
    print(
        f"memory: one more vector env at num_envs={largest} (greedy) added {grown:.1f} MB resident "
        f"(its state arrays: {extra.unwrapped.games.nbytes() / 2**20:.1f} MB); the process grew "
        f"{after - before:.0f} MB over the whole benchmark ({len(base_vec)} envs at N={largest})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
