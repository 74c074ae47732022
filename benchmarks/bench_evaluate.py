"""Tournament speed: games per second for greedy vs greedy with 1 and 2 workers.

    python benchmarks/bench_evaluate.py [--games 200] [--players greedy greedy] [--workers 1 2]

Each count is timed end to end through `run_tournament` (for 2+ workers that includes
starting the worker processes, which load the solver, about 1-2 s each). The one-worker
figure runs after a warm-up game, as a long evaluation would. Also checks that every
worker count gives the same games, and prints the CPU time per game (this process and
its workers), which does not depend on how busy the machine is. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's `agents`, from any folder


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--players", nargs="+", default=["greedy", "greedy"])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from quiddler_agents.evaluation.tournament import Tournament, _Table, run_tournament  # slow: after --help

    tournament = Tournament(tuple(args.players), games=args.games, seed=args.seed)
    _Table(tournament).play([0])  # load the word list index and the compiled solver once
    print(f"{' vs '.join(args.players)}, {tournament.total_games} games, seed {args.seed}")
    reference = None
    for workers in args.workers:
        start, cpu = time.perf_counter(), _cpu_seconds()
        played = run_tournament(tournament, workers=workers)
        seconds = time.perf_counter() - start
        cpu = _cpu_seconds() - cpu
        same = "" if reference is None else f", same games as {args.workers[0]} worker(s): {played == reference}"
        reference = reference if reference is not None else played
        decisions = sum(len(g.actions) for g in played)
        print(
            f"workers={workers}: {len(played) / seconds:7.1f} games/s  ({seconds:6.2f} s, "
            f"{decisions / seconds:8.0f} decisions/s, {1000 * cpu / len(played):5.1f} CPU ms/game{same})"
        )


if __name__ == "__main__":
    main()
