"""Batched engine vs single-game engine: the move-by-move parity replay of `tests/batch_parity.py`, at scale.

    python benchmarks/parity.py [--games 100000] [--workers 2] [--seed 0] [--chunk 100] [--slow-games 200]

The games are split over `RULE_SETS`: half on "default", the rest evenly over the other
sets, except the slow "eight_big_hands" and "two_long_rounds", which get a tenth of an
even share, at most `--slow-games` each (what they leave goes to the other sets). Each
chunk of games is one `replay` call with a seed of its own, run in a pool of `--workers`
processes. Prints per rule set the games, moves, rounds, reshuffles, turn caps and
mismatches replayed, and the seconds the workers spent on it; then the wall time.

A replay stops at its chunk's first mismatch (`ParityError`): the chunk counts one
mismatch, its games do not count as replayed, and the message is printed with the call
that reproduces it. Exit status 1 if any chunk mismatched or failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from tests.batch_parity import GO_OUT_CHANCE, RULE_SETS, ParityError, ParityReport, replay  # noqa: E402

SLOW = ("eight_big_hands", "two_long_rounds")
"""Rule sets whose games take far longer to replay (eight players, or long rounds that reshuffle)."""
FIELDS = ("games", "moves", "rounds", "reshuffles", "turn_caps")


def split_games(total: int, slow_games: int) -> dict[str, int]:
    """Games per rule set: half on default, the slow sets a tenth of an even share (capped), the rest even."""
    others = [name for name in RULE_SETS if name != "default"]
    counts = {"default": total // 2}
    share = (total - counts["default"]) / len(others)
    for name in SLOW:
        counts[name] = min(slow_games, max(1, round(share / 10)))
    fast = [name for name in others if name not in SLOW]
    rest = total - sum(counts.values())
    for k, name in enumerate(fast):
        counts[name] = rest // len(fast) + (k < rest % len(fast))
    return {name: counts[name] for name in RULE_SETS}


def chunks(counts: dict[str, int], chunk: int, seed: int) -> list[tuple[str, int, int]]:
    """(rule set, seed, games) jobs, each with its own seed: slow sets first, then the most players first
    (the longest jobs start first, so the pool does not wait on one at the end)."""
    jobs = []
    for name in sorted(counts, key=lambda n: (n not in SLOW, -QuiddlerConfig(**RULE_SETS[n]).num_players)):
        size = max(1, chunk // 20) if name in SLOW else chunk
        left = counts[name]
        while left > 0:
            jobs.append((name, seed * 1_000_000 + len(jobs), min(size, left)))
            left -= size
    return jobs


def run_chunk(job: tuple[str, int, int, bool]) -> tuple[str, int, int, ParityReport | None, str | None, float]:
    """Replay one chunk: (rule set, seed, games, report or None, mismatch message or None, seconds)."""
    name, seed, games, every_seat = job
    start = time.perf_counter()
    report, error = None, None
    try:
        report = replay(
            QuiddlerConfig(**RULE_SETS[name]),
            seed=seed,
            games=games,
            go_out_chance=GO_OUT_CHANCE.get(name, 0.3),
            every_seat=every_seat,
        )
    except ParityError as e:
        error = str(e)
    except Exception as e:  # noqa: BLE001  (any failure of a replay is a finding: report it, run the rest)
        error = f"{type(e).__name__}: {e}"
    return name, seed, games, report, error, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100_000, help="games in all, split over the rule sets")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="chunk k replays with seed SEED * 10**6 + k")
    parser.add_argument("--chunk", type=int, default=100, help="games per replay call (a twentieth for slow sets)")
    parser.add_argument("--slow-games", type=int, default=200, help="at most this many games per slow rule set")
    parser.add_argument(
        "--every-seat",
        action="store_true",
        help="compare every seat's observation after every move (default: the mover's after every move, every "
        "seat's at each round's first move, in the lay phase and at the end)",
    )
    args = parser.parse_args(argv)
    if args.games < 20 or args.workers < 1 or args.chunk < 1 or args.slow_games < 1:
        parser.error("need --games >= 20 and positive --workers, --chunk and --slow-games")

    counts = split_games(args.games, args.slow_games)
    jobs = [(*job, args.every_seat) for job in chunks(counts, args.chunk, args.seed)]
    totals = {name: dict.fromkeys(FIELDS, 0) | {"mismatches": 0, "seconds": 0.0} for name in RULE_SETS}
    failures: list[str] = []
    print(f"{args.games} games over {len(RULE_SETS)} rule sets, {len(jobs)} chunks, {args.workers} workers", flush=True)
    start = time.perf_counter()
    step = max(1, len(jobs) // 10)
    with Pool(args.workers) as pool:
        for done, (name, seed, games, report, error, seconds) in enumerate(pool.imap_unordered(run_chunk, jobs), 1):
            row = totals[name]
            row["seconds"] += seconds
            if error is None:
                for field in FIELDS:
                    row[field] += getattr(report, field)
            else:
                row["mismatches"] += 1
                failures.append(
                    f"{name}: {error}\n    reproduce: replay(QuiddlerConfig(**RULE_SETS[{name!r}]), seed={seed}, "
                    f"games={games}, go_out_chance={GO_OUT_CHANCE.get(name, 0.3)})"
                )
            if done % step == 0 or done == len(jobs):
                print(f"  {done}/{len(jobs)} chunks, {time.perf_counter() - start:.0f} s", flush=True)
    wall = time.perf_counter() - start

    header = f"{'rule set':<24}{'games':>8}{'moves':>11}{'rounds':>9}{'reshuffles':>11}{'turn caps':>10}"
    print(f"{header}{'mismatches':>11}{'worker s':>10}")
    for name, row in [*totals.items(), ("total", _sum(totals))]:
        print(
            f"{name:<24}{row['games']:>8}{row['moves']:>11}{row['rounds']:>9}{row['reshuffles']:>11}"
            f"{row['turn_caps']:>10}{row['mismatches']:>11}{row['seconds']:>10.1f}"
        )
    replayed = sum(row["games"] for row in totals.values())
    print(f"wall {wall:.1f} s with {args.workers} workers ({replayed / wall:.0f} games/s)")
    for failure in failures:
        print(f"MISMATCH {failure}")
    return 1 if failures else 0


def _sum(totals: dict[str, dict]) -> dict:
    keys = (*FIELDS, "mismatches", "seconds")
    return {key: sum(row[key] for row in totals.values()) for key in keys}


if __name__ == "__main__":
    sys.exit(main())
