"""Rules-engine speed and memory: index build and load, RSS, solver latency, random games.

    python benchmarks/bench_core.py [--games 300] [--hands 2000]

Prints figures; asserts nothing (targets live in the issue and the README).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

import numpy as np

_LOAD_SNIPPET = """
import json, os, resource, sys, time
t = time.perf_counter()
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.solver import get_solver
d = load_dictionary()
load = time.perf_counter() - t
t = time.perf_counter()
s = get_solver(d)
s.best_layout(["Q", "U", "I", "Z"])
ready = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"load_s": load, "solver_ready_s": ready, "rss_mb": rss}))
"""


def _fresh_process(env_cache: str) -> dict:
    import os

    env = dict(os.environ, QUIDDLER_CACHE_DIR=env_cache)
    out = subprocess.run([sys.executable, "-c", _LOAD_SNIPPET], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--hands", type=int, default=2000)
    args = parser.parse_args()

    from quiddler_env.core.cards import new_deck
    from quiddler_env.core.dictionary import Dictionary, load_dictionary
    from quiddler_env.core.game import QuiddlerGame
    from quiddler_env.core.solver import HandSolver

    with tempfile.TemporaryDirectory() as cache:
        first = _fresh_process(cache)  # builds the index and writes the cache
        cached = [_fresh_process(cache) for _ in range(3)]
    d = load_dictionary()
    t = time.perf_counter()
    Dictionary(name="x", identity=d.identity, _words=d.words)._build_index()
    build = time.perf_counter() - t
    print(f"index build (in process):         {build:.2f} s")
    print(f"first process (build + cache):    {first['load_s']:.2f} s")
    print(
        f"cached load (median of 3 procs):  {np.median([c['load_s'] for c in cached]):.2f} s "
        f"(+ solver ready {np.median([c['solver_ready_s'] for c in cached]):.2f} s)"
    )
    print(f"RSS, default dictionary + solver: {np.median([c['rss_mb'] for c in cached]):.0f} MB")

    rng = np.random.default_rng(0)
    deck = np.asarray(new_deck())
    hands = []
    for _ in range(args.hands):
        counts = [0] * 31
        for f in rng.choice(deck, 11, replace=False):
            counts[f] += 1
        hands.append(counts)
    solver = HandSolver(d)
    solver.best_layout(["A", "B"])  # compile / load the kernels
    for name, fn in (
        ("best_layout", lambda c: solver.best_layout(c, counts=True)),
        ("go_out_faces", solver.go_out_faces),
    ):
        cold, warm = [], []
        for c in hands:
            t = time.perf_counter()
            fn(c)
            cold.append(time.perf_counter() - t)
        for c in hands:
            t = time.perf_counter()
            fn(c)
            warm.append(time.perf_counter() - t)
        print(
            f"{name:<13} 11-card hands: cold median {np.median(cold) * 1e6:6.1f} us  p99 {np.percentile(cold, 99) * 1e6:7.1f} us"
            f" | memoised median {np.median(warm) * 1e6:4.2f} us  p99 {np.percentile(warm, 99) * 1e6:5.2f} us"
        )

    game = QuiddlerGame()
    pick = np.random.default_rng(1)
    steps = 0
    t = time.perf_counter()
    for seed in range(args.games):
        game.reset(seed=seed)
        while not game.is_over:
            legal = game.legal_actions()
            game.step(legal[int(pick.integers(len(legal)))])
            steps += 1
    dt = time.perf_counter() - t
    print(
        f"random 2-player games through the core: {steps / dt:,.0f} actions/s "
        f"({args.games / dt:.1f} games/s, {steps / args.games:.0f} actions/game)"
    )


if __name__ == "__main__":
    main()
