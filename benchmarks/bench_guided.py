"""The guided search's decision time, and a quick look at its strength, against `search` in one process.

    python benchmarks/bench_guided.py [--spec guided] [--opponent search] [--games 40] [--seed 4242]
                                      [--out results/bench_guided.json]

Plays `--games` games (whole deals, seats rotated) of `--spec` against copies of `--opponent` through
`evaluate.py`'s own game loop, timing every decision of the candidate (wall clock, one process, torch on
one thread as in `evaluate.py`'s workers). Prints the median, p90 and p99 decision times and the games'
win rate with its Wilson interval; asserts nothing. The target (issue 45): a median decision of at
most 100 ms on the 2-core machine. Strength figures are claimed from 2,000 games of `evaluate.py`, not
from this script's few.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiddler_agents  # noqa: E402
from quiddler_agents.evaluation.stats import wilson_interval  # noqa: E402
from quiddler_agents.evaluation.tournament import Tournament, play_all, seat_figures  # noqa: E402
from quiddler_env.core import files  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="guided", help="the candidate's agent spec")
    parser.add_argument("--opponent", default="search")
    parser.add_argument("--players", type=int, default=2, help="the table size: copies of --opponent fill it")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=4242)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    rules = QuiddlerConfig(num_players=args.players)
    candidate = quiddler_agents.make(args.spec, config=rules)
    specs = (args.spec, *[args.opponent] * (args.players - 1))  # copies of the opponent fill the other seats
    players = [candidate, *(quiddler_agents.make(args.opponent, config=rules) for _ in specs[1:])]
    times: list[float] = []
    act = candidate.act

    def timed(observation, action_mask=None):
        t0 = time.perf_counter()
        move = act(observation, action_mask)
        times.append(time.perf_counter() - t0)
        return move

    candidate.act = timed
    # The first decision loads the policy and compiles nothing new: warm it up outside the figures.
    warm = Tournament(specs, games=args.players, seed=args.seed + 1, rules=rules)
    play_all(warm, players)
    times.clear()
    tournament = Tournament(specs, games=args.games, seed=args.seed, rules=rules)
    t0 = time.perf_counter()
    figures = seat_figures(play_all(tournament, players), 0)
    wall = time.perf_counter() - t0
    ms = np.asarray(times) * 1000
    wins = wilson_interval(figures["wins"], figures["games"])
    out = {
        "spec": args.spec,
        "opponent": args.opponent,
        "games": figures["games"],
        "decisions": int(ms.size),
        "median_ms": float(np.median(ms)),
        "p90_ms": float(np.percentile(ms, 90)),
        "p99_ms": float(np.percentile(ms, 99)),
        "win_rate": wins.estimate,
        "win_interval": [wins.low, wins.high],
        "mean_margin": figures["mean_margin"],
        "seconds": wall,
    }
    print(
        f"{args.spec} against {args.opponent}, {out['games']} games: {out['decisions']} decisions, median "
        f"{out['median_ms']:.1f} ms, p90 {out['p90_ms']:.1f} ms, p99 {out['p99_ms']:.1f} ms; wins "
        f"{100 * wins.estimate:.1f}% [{100 * wins.low:.1f}, {100 * wins.high:.1f}], margin "
        f"{out['mean_margin']:+.1f} a game ({wall:.0f} s)"
    )
    if args.out is not None:
        files.write_json(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
