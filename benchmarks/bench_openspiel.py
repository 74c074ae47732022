"""The anchor, side by side in one run: Quiddler's `env()` and `raw_env` against OpenSpiel's C++ gin rummy.

    python benchmarks/bench_openspiel.py --setup                  # once: benchmarks/.venv-openspiel with open_spiel
    python benchmarks/bench_openspiel.py [--seconds 10] [--rounds 3]

Each measurement is a fresh single-threaded process playing full games with uniform
random legal moves for about `--seconds`, reading at every agent step what an agent
reads: for Quiddler the env's observation dict (vector and mask, through `last()`), for
gin rummy `observation_tensor` of the player to move and `legal_actions` (chance nodes
are sampled and not counted). The three are measured in turn, `--rounds` times, so
load on a shared machine falls on all of them; the table gives each one's median agent
steps per second of wall time and per CPU second of its process, and the ratio to gin
rummy. OpenSpiel lives in its own venv (`--openspiel-python`, default the one `--setup`
makes), since its wheel pins nothing of this project. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPENSPIEL_VENV = ROOT / "benchmarks" / ".venv-openspiel"

_GIN_RUMMY = """
import json, random, resource, sys, time
import pyspiel
seconds = float(sys.argv[1])
game = pyspiel.load_game("gin_rummy")
rng = random.Random(0)
steps = games = 0
t0 = time.perf_counter(); c0 = resource.getrusage(resource.RUSAGE_SELF)
while time.perf_counter() - t0 < seconds:
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, probs)[0])
            continue
        player = state.current_player()
        state.observation_tensor(player)
        legal = state.legal_actions(player)
        state.apply_action(legal[int(rng.random() * len(legal))])
        steps += 1
    games += 1
wall = time.perf_counter() - t0; c1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
print(json.dumps({"steps": steps, "games": games, "wall": wall, "cpu": cpu}))
"""

_QUIDDLER = """
import json, resource, sys, time
import numpy as np
import quiddler_env
from quiddler_env.envs.quiddler_v0 import raw_env
seconds, which = float(sys.argv[1]), sys.argv[2]
make = quiddler_env.env if which == "env" else raw_env
env = make()
rng = np.random.default_rng(0)
env.reset(seed=0)
for _ in env.agent_iter():  # one game first: numba's compiled kernels load from their cache
    obs, _, term, trunc, _ = env.last()
    env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
steps = games = 0
t0 = time.perf_counter(); c0 = resource.getrusage(resource.RUSAGE_SELF)
while time.perf_counter() - t0 < seconds:
    env.reset(seed=games + 1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
        else:
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[int(rng.random() * len(legal))]))
            steps += 1
    games += 1
wall = time.perf_counter() - t0; c1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
print(json.dumps({"steps": steps, "games": games, "wall": wall, "cpu": cpu}))
"""

_SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def measure(python: str, code: str, *args: str) -> dict:
    import os

    env = {**os.environ, **_SINGLE_THREAD, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"bench_openspiel.py: a measurement failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def setup() -> None:
    subprocess.run([sys.executable, "-m", "venv", str(OPENSPIEL_VENV)], check=True)
    subprocess.run([str(OPENSPIEL_VENV / "bin" / "pip"), "install", "-q", "open_spiel"], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true", help=f"make {OPENSPIEL_VENV} with open_spiel, then exit")
    parser.add_argument("--openspiel-python", default=str(OPENSPIEL_VENV / "bin" / "python"))
    parser.add_argument("--seconds", type=float, default=10.0, help="play time of each measurement")
    parser.add_argument("--rounds", type=int, default=3, help="times each of the three is measured, in turn")
    args = parser.parse_args(argv)
    if args.setup:
        setup()
        return 0
    if not Path(args.openspiel_python).is_file():
        print(f"bench_openspiel.py: no OpenSpiel interpreter at {args.openspiel_python}; run with --setup first")
        return 2
    runs: dict[str, list[dict]] = {"gin rummy (OpenSpiel C++)": [], "quiddler_env.env()": [], "raw_env": []}
    for _ in range(args.rounds):
        runs["gin rummy (OpenSpiel C++)"].append(measure(args.openspiel_python, _GIN_RUMMY, str(args.seconds)))
        runs["quiddler_env.env()"].append(measure(sys.executable, _QUIDDLER, str(args.seconds), "env"))
        runs["raw_env"].append(measure(sys.executable, _QUIDDLER, str(args.seconds), "raw"))

    def rate(rs: list[dict], key: str) -> float:
        return statistics.median(r["steps"] / r[key] for r in rs)

    anchor_wall = rate(runs["gin rummy (OpenSpiel C++)"], "wall")
    anchor_cpu = rate(runs["gin rummy (OpenSpiel C++)"], "cpu")
    print(f"agent steps / s, median of {args.rounds} interleaved runs of {args.seconds:g} s, one thread each:")
    print(f"  {'':28} {'wall':>10} {'per CPU s':>10} {'x gin rummy (wall, CPU)':>26}")
    for name, rs in runs.items():
        wall, cpu = rate(rs, "wall"), rate(rs, "cpu")
        print(f"  {name:28} {wall:>10,.0f} {cpu:>10,.0f} {wall / anchor_wall:>15.2f} {cpu / anchor_cpu:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
