"""Scripted bots: strength (win rates, seats swapped) and speed (median decision time).

    python benchmarks/bench_agents.py [--games 2000] [--games4 400] [--speed-games 40] [--workers 2]
                                      [--expert expert] [--search search] [--out results/bench_agents.json]

Strength, 2 players: every deal is played twice with the seats swapped, so the deal
favours neither bot; a tie is not a win. 4 players: every deal is played four times,
the lineup (expert, greedy, random, random) rotated one seat each time. Speed: one
process, the solver warmed up, each decision of expert-vs-greedy and search-vs-expert games
timed.

Prints figures (and writes them as JSON with --out); asserts nothing. Targets (issue
4): greedy beats random in >= 95% of games, expert beats greedy in >= 60%, median
decision under 1 ms (greedy) and 50 ms (expert); issue 13: search beats the expert in
>= 60% with a median decision of at most 100 ms.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiddler_agents  # noqa: E402
from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.game import QuiddlerGame  # noqa: E402

_GAME: dict[int, QuiddlerGame] = {}


def _game(n: int) -> QuiddlerGame:
    game = _GAME.get(n)
    if game is None:
        game = _GAME[n] = QuiddlerGame(QuiddlerConfig(num_players=n))
    return game


def _play(job: tuple[list[str], int, int]) -> tuple[list[int], list[int]]:
    """One game: specs in seat order, the deal seed, the seed the agents' seeds derive from."""
    specs, deal, agent_seed = job
    n = len(specs)
    seats = [quiddler_agents.make(spec, seed=agent_seed * 16 + i, num_players=n) for i, spec in enumerate(specs)]
    record = quiddler_agents.play_game(seats, seed=deal, game=_game(n))
    return record.totals, record.winners


def _wilson(wins: float, n: int) -> tuple[float, float]:
    """95% Wilson interval of a win rate."""
    if n == 0:
        return (0.0, 0.0)
    p, z = wins / n, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def duel(pool: Pool, a: str, b: str, games: int, seed: int) -> dict:
    """`a` vs `b`, 2 players, `games` games: each deal twice, seats swapped."""
    jobs, a_seat = [], []
    for g in range(games):
        deal = seed + g // 2
        swapped = g % 2 == 1
        jobs.append(([b, a] if swapped else [a, b], deal, seed * 7919 + g))
        a_seat.append(1 if swapped else 0)
    results = pool.map(_play, jobs, chunksize=8)
    wins = ties = 0
    margins = []
    for (totals, winners), s in zip(results, a_seat, strict=True):
        if winners == [s]:
            wins += 1
        elif s in winners:
            ties += 1
        margins.append(totals[s] - totals[1 - s])
    lo, hi = _wilson(wins, games)
    return {
        "a": a,
        "b": b,
        "games": games,
        "a_wins": wins,
        "ties": ties,
        "b_wins": games - wins - ties,
        "a_win_rate": wins / games,
        "a_win_rate_95ci": [lo, hi],
        "mean_margin": float(np.mean(margins)),
    }


def table4(pool: Pool, lineup: list[str], deals: int, seed: int) -> dict:
    """A 4-player lineup, each deal played with the lineup rotated through the four seats."""
    jobs, rotations = [], []
    for d in range(deals):
        for r in range(4):
            specs = lineup[-r:] + lineup[:-r] if r else list(lineup)
            jobs.append((specs, seed + d, seed * 7919 + d * 4 + r))
            rotations.append(r)
    results = pool.map(_play, jobs, chunksize=4)
    k = len(lineup)
    outright, shared, totals = np.zeros(k), np.zeros(k), np.zeros(k)
    for (tot, winners), r in zip(results, rotations, strict=True):
        for i in range(k):
            seat = (i + r) % k  # lineup entry i sits at seat i + r
            totals[i] += tot[seat]
            if winners == [seat]:
                outright[i] += 1
            elif seat in winners:
                shared[i] += 1 / len(winners)
    games = len(jobs)
    return {
        "lineup": lineup,
        "games": games,
        "players": [
            {
                "spec": spec,
                "seat_in_lineup": i,
                "outright_wins": int(outright[i]),
                "win_rate": outright[i] / games,
                "win_share_with_ties": (outright[i] + shared[i]) / games,
                "mean_total": totals[i] / games,
            }
            for i, spec in enumerate(lineup)
        ],
    }


def speed(expert: str, games: int, seed: int, opponent: str = "greedy") -> dict:
    """Decision times of `opponent` and `expert` in games between them (this process only)."""
    warm = [quiddler_agents.make(s, seed=0, num_players=2) for s in (expert, opponent)]
    quiddler_agents.play_game(warm, seed=10**6)  # compile the solver kernels, fill nothing we measure later
    times: dict[str, list[float]] = {opponent: [], expert: []}
    for g in range(games):
        specs = [expert, opponent] if g % 2 == 0 else [opponent, expert]
        seats = [quiddler_agents.make(s, seed=seed + g * 2 + i, num_players=2) for i, s in enumerate(specs)]
        record = quiddler_agents.play_game(seats, seed=seed + g, time_decisions=True)
        for spec, secs in zip(specs, record.seconds, strict=True):
            times[spec].extend(secs)
    out = {}
    for spec, secs in times.items():
        ms = np.asarray(secs) * 1e3
        out[spec] = {
            "decisions": int(ms.size),
            "median_ms": float(np.median(ms)),
            "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)),
            "mean_ms": float(ms.mean()),
            "max_ms": float(ms.max()),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000, help="2-player games per matchup (even: seats swapped)")
    parser.add_argument("--games4", type=int, default=400, help="4-player deals (each played 4 times, rotated)")
    parser.add_argument("--speed-games", type=int, default=40, help="expert-vs-greedy games timed in one process")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--expert", default="expert", help="the expert's spec, e.g. expert:samples=64")
    parser.add_argument("--search", default="search", help="the search bot's spec, timed and played against the expert")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    quiddler_agents.parse_spec(args.expert)

    report: dict = {"expert": args.expert, "seed": args.seed}
    t0 = time.perf_counter()
    report["speed"] = speed(args.expert, args.speed_games, args.seed)
    report["speed"][args.search] = speed(args.search, args.speed_games, args.seed, opponent=args.expert)[args.search]
    for spec, s in report["speed"].items():
        print(
            f"speed {spec:>10}: median {s['median_ms']:.3f} ms  p90 {s['p90_ms']:.2f} ms  p99 {s['p99_ms']:.2f} ms  "
            f"max {s['max_ms']:.1f} ms  ({s['decisions']} decisions)",
            flush=True,
        )
    with Pool(args.workers) as pool:
        report["duels"] = []
        for a, b in (("greedy", "random"), (args.expert, "greedy"), (args.search, args.expert)):
            if args.games <= 0:
                break
            r = duel(pool, a, b, args.games, args.seed)
            report["duels"].append(r)
            lo, hi = r["a_win_rate_95ci"]
            print(
                f"2p {a} vs {b}: {a} wins {100 * r['a_win_rate']:.1f}% (95% CI {100 * lo:.1f}-{100 * hi:.1f}) "
                f"of {r['games']} games, ties {r['ties']}, mean margin {r['mean_margin']:+.1f}",
                flush=True,
            )
        if args.games4 > 0:
            r = table4(pool, [args.expert, "greedy", "random", "random"], args.games4, args.seed)
            report["four_players"] = r
            print(f"4p {' / '.join(r['lineup'])}, {r['games']} games:")
            for p in r["players"]:
                print(
                    f"   {p['spec']:>10} (lineup seat {p['seat_in_lineup']}): wins {100 * p['win_rate']:.1f}%  "
                    f"share with ties {100 * p['win_share_with_ties']:.1f}%  mean total {p['mean_total']:.1f}"
                )
    report["seconds"] = time.perf_counter() - t0
    print(f"total {report['seconds']:.0f} s")
    if args.out:
        files.write_json(args.out, report)


if __name__ == "__main__":
    main()
