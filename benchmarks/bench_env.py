"""Environment speed: agent steps per second through `env()`, `raw_env` and `Quiddler-v0`, games/s, RSS.

    python benchmarks/bench_env.py [--games 40] [--runs 5] [--players 2] [--profile raw|env|gym] [--json out.json]

Every run plays `--games` full games (every game a new seed, so the solver's memo
warms only as it would in training) with uniform random legal actions; the figure
is the median over `--runs`. Agent steps are moves: a turn is two (draw, discard).
Through `Quiddler-v0` the learner's `step` calls are fewer than the moves played
(the opponents move inside the env); both rates are printed, the moves first.
`--profile` runs cProfile on one more run and prints where the time goes, grouped
by layer, then the top functions. Asserts nothing (the targets are in the README).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from pettingzoo.utils import wrappers

import quiddler_env
from quiddler_env.core import files
from quiddler_env.envs.quiddler_v0 import raw_env

_UNIFORMS = 1 << 16


class Picker:
    """Uniform random legal action from a pre-drawn block of uniforms (keeps the policy's cost out of the way)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.block = self.rng.random(_UNIFORMS).tolist()
        self.i = 0

    def __call__(self, mask: np.ndarray) -> int:
        legal = mask.nonzero()[0]
        if self.i == _UNIFORMS:
            self.block = self.rng.random(_UNIFORMS).tolist()
            self.i = 0
        u = self.block[self.i]
        self.i += 1
        return int(legal[int(u * len(legal))])


def run_aec(env, seeds: range, pick: Picker) -> int:
    """Full games through the AEC loop; returns the agent steps (moves) played."""
    moves = 0
    for seed in seeds:
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
            else:
                env.step(pick(obs["action_mask"]))
                moves += 1
    return moves


def run_gym(env, seeds: range, pick: Picker) -> tuple[int, int]:
    """Full games through Quiddler-v0; returns (moves by every seat, learner steps)."""
    moves = learner = 0
    for seed in seeds:
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(pick(info["action_mask"]))
            learner += 1
            done = terminated or truncated
        moves += env.unwrapped.moves_played
    return moves, learner


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB."""
    with open("/proc/self/statm") as f:
        current = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return current, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_LAYERS = (
    ("solver (core/solver*, numba kernels)", ("core/solver", "core/dictionary")),
    ("game rules (core/game, scoring, cards)", ("core/game", "core/scoring", "core/cards", "core/actions")),
    ("observation encoding (envs/observation)", ("envs/observation",)),
    ("env layer (envs/quiddler_v0, gym_env, common)", ("envs/quiddler_v0", "envs/gym_env", "envs/common")),
    ("PettingZoo wrappers and AECEnv", ("pettingzoo/",)),
    ("Gymnasium wrappers and spaces", ("gymnasium/",)),
    ("numpy", ("numpy/",)),
)


def profile(name: str, target, seeds: range, pick: Picker) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    target(seeds, pick)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(v[2] for v in stats.stats.values())  # own time of every function
    groups = {label: 0.0 for label, _ in _LAYERS}
    groups["builtins and C calls (numpy ufuncs, list ops)"] = 0.0
    groups["benchmark loop"] = 0.0
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():
        path = filename.replace(os.sep, "/")
        for label, keys in _LAYERS:
            if any(k in path for k in keys):
                groups[label] += tottime
                break
        else:
            key = "benchmark loop" if path.endswith("bench_env.py") else "builtins and C calls (numpy ufuncs, list ops)"
            groups[key] += tottime
    print(f"\nprofile of {name} (cProfile, own time per layer; cProfile inflates small Python calls):")
    for label, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds / total:6.1%}  {label}")
    print("top functions by own time:")
    stats.sort_stats("tottime").print_stats(12)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="full games per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--profile", choices=("raw", "env", "gym"))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.games < 1 or args.runs < 1:
        parser.error("--games and --runs must be at least 1")

    # PettingZoo's own wrappers around the same raw env: what `env()`'s one-hop wrapper subclasses (reading
    # the raw env's state past the wrappers' `__getattr__` chain, `quiddler_v0._RawState`) are worth.
    stock = wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw_env(num_players=args.players), -1))
    )
    targets = {
        "env() (all wrappers)": ("env", quiddler_env.env(num_players=args.players)),
        "PettingZoo's own wrappers": ("env", stock),
        "raw_env": ("raw", raw_env(num_players=args.players)),
        "Quiddler-v0 (gym.make)": ("gym", gym.make("Quiddler-v0", num_players=args.players)),
    }
    pick = Picker(0)
    # Warm-up: dictionary cache, compiled kernels, first allocations.
    run_aec(targets["raw_env"][1], range(10**6, 10**6 + 2), pick)

    results: dict = {"players": args.players, "games_per_run": args.games, "runs": args.runs, "targets": {}}
    # Runs alternate between the targets so that a change in machine load hits all of them alike; each rate
    # is also measured in CPU time of this process, which time spent waiting for a busy CPU does not inflate.
    measured: dict[str, dict[str, list[float]]] = {
        label: {"wall": [], "cpu": [], "learner": [], "games": []} for label in targets
    }
    next_seed = 0
    for _ in range(args.runs):
        for label, (key, env) in targets.items():
            seeds = range(next_seed, next_seed + args.games)
            next_seed += args.games
            wall, cpu = time.perf_counter(), time.process_time()
            if key == "gym":
                moves, learner = run_gym(env, seeds, pick)
            else:
                moves, learner = run_aec(env, seeds, pick), 0
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            m = measured[label]
            m["wall"].append(moves / wall)
            m["cpu"].append(moves / cpu)
            m["games"].append(args.games / wall)
            if learner:
                m["learner"].append(learner / wall)
    print(f"{args.players}-player games, {args.games} games x {args.runs} runs, median (per CPU second in brackets):")
    for label, m in measured.items():
        entry = {
            "agent_steps_per_s": statistics.median(m["wall"]),
            "agent_steps_per_cpu_s": statistics.median(m["cpu"]),
            "games_per_s": statistics.median(m["games"]),
            "runs": [round(r) for r in m["wall"]],
        }
        line = (
            f"  {label:<24} {entry['agent_steps_per_s']:>9,.0f} agent steps/s ({entry['agent_steps_per_cpu_s']:,.0f})"
            f"  {entry['games_per_s']:7.1f} games/s"
        )
        if m["learner"]:
            entry["learner_steps_per_s"] = statistics.median(m["learner"])
            line += f"  {entry['learner_steps_per_s']:,.0f} learner steps/s"
        print(line + f"   runs: {entry['runs']}")
        results["targets"][label] = entry
    current, peak = rss_mb()
    results["rss_mb"] = {"current": current, "peak": peak}
    print(f"RSS: {current:.0f} MB now, {peak:.0f} MB peak (dictionary, solver memo, torch not loaded)")

    if args.profile:
        key = args.profile
        label, (_, env) = next((lbl, t) for lbl, t in targets.items() if t[0] == key)  # the first of the key
        seeds = range(next_seed, next_seed + args.games)
        if key == "gym":
            profile(label, lambda s, p: run_gym(env, s, p), seeds, pick)
        else:
            profile(label, lambda s, p: run_aec(env, s, p), seeds, pick)

    if args.json is not None:
        files.write_json(args.json, results)
    return results


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
